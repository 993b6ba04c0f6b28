// The thread backward runs on, as PyTorch's autograd engine runs it on its device thread: the
// main thread hands it the step's backward and waits until it has been issued (loss.backward()
// returns when the engine is done), then goes on with the optimizer. The two threads never
// launch at the same time: the program orders them, through this hand-over.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace framework_trainer {

class AutogradThread {
 public:
  // `device` is made current on the new thread, as the engine does for its device thread.
  explicit AutogradThread(int device);
  AutogradThread(const AutogradThread&) = delete;
  AutogradThread& operator=(const AutogradThread&) = delete;
  ~AutogradThread();

  // Runs `task` on the thread and returns when it has finished; rethrows what it threw.
  void run(std::function<void()> task);

 private:
  void loop(int device);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> task_;
  bool done_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace framework_trainer
