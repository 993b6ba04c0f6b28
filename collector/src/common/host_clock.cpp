#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "common/clock.hpp"
#include "syncopate/collector/recorder_config.hpp"
#include "syncopate/dispatch/log.hpp"

namespace syncopate::preload {
namespace {

#if defined(__x86_64__)
constexpr std::int64_t kClockSourceCheckNs = 1'000'000'000;
constexpr int kAnchorTries = 5;

// The first line of a sysfs file of the clock sources, without its newline ("" if unreadable).
void readClockSources(const char* path, char (&line)[128]) noexcept {
  line[0] = '\0';
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return;
  if (std::fgets(line, sizeof line, file) == nullptr) line[0] = '\0';
  std::fclose(file);
  line[std::strcspn(line, "\n")] = '\0';
}

// The kernel's own word: where it keeps CLOCK_MONOTONIC with the TSC, it has checked the counter
// invariant and the cores' counters in step (else it would have fallen back to another source),
// and CLOCK_MONOTONIC is a line in the counter. A virtual machine's kernel often keeps time with
// its hypervisor's clock (`kvm-clock`, itself read from the counter) while still offering `tsc`,
// which it offers only while it has not found the counter unstable; with a processor that
// declares its counter invariant, CLOCK_MONOTONIC is then a line in it as well.
bool kernelVouchesForTsc(bool processor_invariant) noexcept {
  char current[128];
  readClockSources("/sys/devices/system/clocksource/clocksource0/current_clocksource", current);
  if (std::strcmp(current, "tsc") == 0) return true;
  if (!processor_invariant) return false;
  char available[128];
  readClockSources("/sys/devices/system/clocksource/clocksource0/available_clocksource", available);
  for (char* save = nullptr, *name = strtok_r(available, " ", &save); name != nullptr; name = strtok_r(nullptr, " ", &save)) {
    if (std::strcmp(name, "tsc") == 0) return true;
  }
  return false;
}

// The processor's own word (CPUID 0x80000007, EDX bit 8: the counter runs at one rate in every
// power state), which SYNCOPATE_HOST_CLOCK=tsc takes alone, without the kernel's: a virtual
// machine's kernel may have been told not to trust a counter that is invariant. It says nothing
// of the cores' counters being in step; the anchors, taken on whichever core the background
// thread runs, withdraw the line if they are not by more than 1 ms
// (TscCalibrator::kMaxSlewErrorNs).
bool processorTscIsInvariant() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
}

// Whether readings may use the counter, as the configuration asks (the processor's word is
// asked once: CPUID traps to a virtual machine's hypervisor, and its answer does not change).
bool counterMayBeUsed(HostClockChoice choice) noexcept {
  static const bool invariant = processorTscIsInvariant();
  return choice == HostClockChoice::Tsc ? invariant : kernelVouchesForTsc(invariant);
}

std::uint64_t orderedTicks() noexcept {
  _mm_lfence();
  return __rdtsc();
}

// The tightest of a few tries: the clock was read somewhere between the two counter readings.
TscAnchor measureAnchor() noexcept {
  TscAnchor best;
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int attempt = 0; attempt < kAnchorTries; ++attempt) {
    const std::uint64_t before = orderedTicks();
    const std::int64_t ns = systemMonotonicNs();
    const std::uint64_t after = orderedTicks();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// The background thread's alone (no lock: a child forked while one was held would never get it).
struct Calibration {
  TscCalibrator calibrator;
  std::optional<TscLine> current;
  bool tsc = false;
  bool refusal_logged = false;  // SYNCOPATE_HOST_CLOCK=tsc on a counter that is not invariant
  std::int64_t next_source_check_ns = 0;
};
#endif

}  // namespace

bool calibrateHostClock() noexcept {
#if defined(__x86_64__)
  const HostClockChoice choice = recorderConfig().host_clock;
  if (choice == HostClockChoice::System) return false;
  static Calibration calibration;
  const std::int64_t now = systemMonotonicNs();
  if (now >= calibration.next_source_check_ns) {
    calibration.next_source_check_ns = now + kClockSourceCheckNs;
    calibration.tsc = counterMayBeUsed(choice);
    if (choice == HostClockChoice::Tsc && !calibration.tsc && !calibration.refusal_logged) {
      calibration.refusal_logged = true;
      log(LogLevel::Warn, "SYNCOPATE_HOST_CLOCK=tsc: this processor does not declare its time-stamp counter invariant "
                          "(CPUID 0x80000007); timestamps are read through clock_gettime");
    }
    if (!calibration.tsc && calibration.current) {
      host_tsc_clock.publish(TscLine{});
      calibration.current.reset();
      calibration.calibrator.reset();
    }
  }
  if (!calibration.tsc) return false;
  if (std::optional<TscLine> line = calibration.calibrator.next(measureAnchor(), calibration.current)) {
    host_tsc_clock.publish(*line);
    calibration.current = line->valid_ticks != 0 ? line : std::nullopt;
  }
  return calibration.current.has_value();
#else
  if (recorderConfig().host_clock == HostClockChoice::Tsc) {
    static bool refusal_logged = false;  // the background thread's alone
    if (!refusal_logged) {
      refusal_logged = true;
      log(LogLevel::Warn, "SYNCOPATE_HOST_CLOCK=tsc: this processor has no time-stamp counter the collector reads; "
                          "timestamps are read through clock_gettime");
    }
  }
  return false;
#endif
}

}  // namespace syncopate::preload
