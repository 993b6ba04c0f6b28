// The preload library's one way to say something: a line on stderr prefixed with
// `syncopate[<pid>]:`. Formats into a stack buffer and writes it with one write(2): no
// allocation, no locks, never throws, safe from any thread (but not the hot path: it is a
// system call). The threshold comes from SYNCOPATE_LOG=error|warn|info|debug (default warn).
#pragma once

namespace syncopate::preload {

enum class LogLevel : int { Error = 0, Warn = 1, Info = 2, Debug = 3 };

bool logEnabled(LogLevel level) noexcept;

[[gnu::format(printf, 2, 3)]] void log(LogLevel level, const char* format, ...) noexcept;

}  // namespace syncopate::preload
