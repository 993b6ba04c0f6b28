// Wall and CPU time of the phases of a load and analysis (`syncopate analyze --timings`), and
// the process's peak memory at the end of each, so that a user with a slow or large analysis, or
// an engineer making it faster or smaller, sees where the time and the memory go.
#pragma once

#include <string>
#include <vector>

namespace syncopate::analyzer {

class PhaseTimings {
 public:
  struct Phase {
    std::string name;
    double wall_s = 0;
    double cpu_s = 0;  // the whole process's CPU time (every thread) during the phase
    // The process's peak resident memory so far, at the phase's end (getrusage's ru_maxrss):
    // the phase in which it grows is the one that set the peak.
    double peak_rss_mib = 0;
  };

  // Ends the current phase, if any, and starts `name`.
  void start(std::string name);
  // Ends the current phase, if any.
  void stop();
  const std::vector<Phase>& phases() const { return phases_; }

 private:
  std::vector<Phase> phases_;
  bool running_ = false;
  double wall0_ = 0, cpu0_ = 0;
};

// Times one phase on an optional PhaseTimings (nothing when it is null), ending it on scope exit.
class PhaseScope {
 public:
  PhaseScope(PhaseTimings* timings, std::string name) : t_(timings) {
    if (t_) t_->start(std::move(name));
  }
  ~PhaseScope() {
    if (t_) t_->stop();
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PhaseTimings* t_;
};

}  // namespace syncopate::analyzer
