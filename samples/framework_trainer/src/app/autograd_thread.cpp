#include "autograd_thread.hpp"

#include "sample_common/cuda_check.hpp"

namespace framework_trainer {

AutogradThread::AutogradThread(int device) : thread_([this, device] { loop(device); }) {}

AutogradThread::~AutogradThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void AutogradThread::run(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  task_ = std::move(task);
  done_ = false;
  error_ = nullptr;
  changed_.notify_all();
  changed_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

void AutogradThread::loop(int device) {
  std::exception_ptr setup_error;
  try {
    SAMPLE_CUDA(cudaSetDevice(device));
  } catch (...) {
    setup_error = std::current_exception();
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || task_ != nullptr; });
    if (stopping_) return;
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    std::exception_ptr error = setup_error;
    if (!error) {
      try {
        task();
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    error_ = error;
    done_ = true;
    changed_.notify_all();
  }
}

}  // namespace framework_trainer
