// syncopate-gui DIR [DIR2] [--screenshot out.png] [--iteration N] [--size WxH] [--hide nvtx,...] [--open MODE]:
// the GUI's own executable, which `syncopate gui ...` runs (docs/architecture.md, "The GUI is an
// executable of its own"), so that no other command loads Qt.
#include <QApplication>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <string_view>

#include "syncopate/gui/widgets/gui_app.hpp"

namespace syncopate::gui::app {

namespace {

// As every syncopate command reports a failure: "syncopate gui: <message>" on stderr, status 1.
[[noreturn]] void fail(std::string_view message) {
  std::fprintf(stderr, "syncopate gui: %.*s\n", static_cast<int>(message.size()), message.data());
  throw CLI::RuntimeError(1);
}

// Two warnings every headless Qt run prints and that say nothing about the run: the offscreen
// platform cannot resize native windows (dock widgets ask it to), and batch environments have
// no XDG_RUNTIME_DIR. Everything else Qt says still reaches stderr.
QtMessageHandler qt_default_handler = nullptr;
void quietHeadlessQt(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (type == QtWarningMsg && (message.contains(QLatin1String("does not support propagateSizeHints")) ||
                               message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set"))))
    return;
  qt_default_handler(type, context, message);
}

struct GuiArgs {
  std::vector<std::string> runs;
  std::string screenshot;
  std::optional<std::int64_t> iteration;
  std::string size = "1600x1000";
  std::vector<std::string> hide;
  std::string open = "auto";
};

void run(const GuiArgs& args) {
  gui::GuiOptions options;
  for (const auto& r : args.runs) options.runs.emplace_back(r);
  if (!args.screenshot.empty()) options.screenshot = args.screenshot;
  options.iteration = args.iteration;
  std::smatch m;
  if (!std::regex_match(args.size, m, std::regex(R"((\d{2,5})x(\d{2,5}))")))
    fail("--size takes WIDTHxHEIGHT in pixels, e.g. 1600x1000; got '" + args.size + "'.");
  options.width = std::stoi(m[1]);
  options.height = std::stoi(m[2]);
  for (const std::string& h : args.hide) {
    if (h == "threads") options.hidden_lanes.push_back(gui::LaneKind::Thread);
    else if (h == "nvtx") options.hidden_lanes.push_back(gui::LaneKind::Ranges);
    else if (h == "streams") options.hidden_lanes.push_back(gui::LaneKind::Stream);
    else fail("--hide takes threads, nvtx or streams (comma-separated); got '" + h + "'.");
  }

  if (args.open == "summary") options.open = gui::OpenMode::Summary;
  else if (args.open == "full") options.open = gui::OpenMode::Full;
  else if (args.open != "auto") fail("--open takes auto, summary or full; got '" + args.open + "'.");

  // Headless rendering needs no display; a window does.
  if (options.screenshot && std::getenv("QT_QPA_PLATFORM") == nullptr) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  if (!options.screenshot && std::getenv("QT_QPA_PLATFORM") == nullptr && std::getenv("DISPLAY") == nullptr &&
      std::getenv("WAYLAND_DISPLAY") == nullptr) {
    fail("there is no display to open a window on: set DISPLAY (or WAYLAND_DISPLAY), or render without one "
                "with --screenshot FILE.png.");
  }
  if (options.screenshot) qt_default_handler = qInstallMessageHandler(quietHeadlessQt);
  int argc = 1;
  char name[] = "syncopate";
  char* argv[] = {name, nullptr};
  QApplication app(argc, argv);
  if (options.screenshot) {
    if (trace::Status s = gui::saveScreenshot(options); !s) fail(s.message());
    return;
  }
  if (const int code = gui::runInteractive(options); code != 0) throw CLI::RuntimeError(code);
}

void addOptions(CLI::App& app, GuiArgs& a) {
  CLI::App* sub = &app;
  GuiArgs* args = &a;
  sub->add_option("runs", args->runs, "run directory, and optionally a second one to compare with it")
      ->required()
      ->expected(1, 2);
  sub->add_option("--screenshot", args->screenshot,
                  "render the window to this PNG without a display (QT_QPA_PLATFORM=offscreen) and exit");
  sub->add_option("--iteration", args->iteration, "show this iteration (and align the two runs on it)");
  sub->add_option("--size", args->size, "window size, WIDTHxHEIGHT")->capture_default_str();
  sub->add_option("--hide", args->hide, "lanes not to show: threads, nvtx, streams (also toggled in the toolbar)")
      ->delimiter(',');
  sub->add_option("--open", args->open,
                  "auto: a run whose stores pass 256 MiB opens on its analysis results (analysis.sqlite) and reads a "
                  "rank's ops when its lanes are expanded; summary: always so; full: every store's ops")
      ->capture_default_str();
}

}  // namespace
}  // namespace syncopate::gui::app

int main(int argc, char** argv) {
  CLI::App app{"Open a run in the timeline viewer (every rank's threads and streams, overlap and exposed "
               "communication, collectives, the critical path, metrics and the tuner's recommendation); two runs "
               "are shown one above the other, aligned on an iteration's start.",
               "syncopate gui"};
  syncopate::gui::app::GuiArgs args;
  syncopate::gui::app::addOptions(app, args);
  try {
    app.parse(argc, argv);
    syncopate::gui::app::run(args);
  } catch (const CLI::ParseError& error) {
    // A failure arrives as CLI::RuntimeError carrying its exit code (already reported).
    return app.exit(error);
  }
  return 0;
}
