// Whole-application benchmark of the GUI on a large run (docs/gui.md, "Figures"):
//   time to first paint  from MainWindow::open() to the end of the first paint of the timeline
//                        showing the run (store read, lanes, LOD summaries, paint);
//   analysis ready       until the analyzer's metrics and critical paths are in;
//   frame time           painting the timeline zoomed fully out, at one iteration and at 50 µs,
//                        panning a pixel between frames (median and worst of --frames);
//   a rank expanded      with --expand-rank R on a run opened on its analysis results: from
//                        asking for rank row R's ops to the end of the next paint.
// The run is written once through the trace writer into --dir and reused; a --dir that already
// holds a run (bench/analyzer/scale_out.sh's) is opened as it is, --open as `syncopate gui` takes it.
//   QT_QPA_PLATFORM=offscreen build/bin/gui_bench [--ops 1000000] [--ranks 8] [--dir DIR] [--frames 40]
//                                                 [--open auto|summary|full] [--expand-rank R]
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <QPainter>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "synthetic_run.hpp"
#include "syncopate/gui/widgets/main_window.hpp"

using namespace syncopate;

namespace {

struct Args {
  gui::bench::SyntheticRunOptions run;
  std::filesystem::path dir;
  int frames = 40;
  gui::OpenMode open = gui::OpenMode::Auto;
  long expand_rank = -1;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (k == "--ops") a.run.ops = std::atoll(v);
    else if (k == "--ranks") a.run.ranks = std::atoi(v);
    else if (k == "--dir") a.dir = v;
    else if (k == "--frames") a.frames = std::atoi(v);
    else if (k == "--expand-rank") a.expand_rank = std::atol(v);
    else if (k == "--open" && std::strcmp(v, "auto") == 0) a.open = gui::OpenMode::Auto;
    else if (k == "--open" && std::strcmp(v, "summary") == 0) a.open = gui::OpenMode::Summary;
    else if (k == "--open" && std::strcmp(v, "full") == 0) a.open = gui::OpenMode::Full;
    else return false;
  }
  if (a.dir.empty()) a.dir = std::filesystem::temp_directory_path() / ("syncopate-gui-bench-" + std::to_string(a.run.ops));
  return a.run.ops > 0 && a.run.ranks > 0 && a.frames > 0;
}

// CPU time of this thread, or of the whole process, in ms: on a shared machine the wall clock
// also counts time the scheduler gave to others, so both are reported.
double cpuMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct FrameTimes {
  double median_ms = 0, worst_ms = 0;          // wall
  double cpu_median_ms = 0, cpu_worst_ms = 0;  // the painting thread's CPU time
};

FrameTimes paintFrames(gui::TimelineWidget& timeline, int frames) {
  QImage image(timeline.size(), QImage::Format_ARGB32_Premultiplied);
  std::vector<double> wall, cpu;
  for (int i = 0; i < frames; ++i) {
    timeline.axis().panPixels(i % 2 == 0 ? 1 : -1);
    QElapsedTimer t;
    t.start();
    const double c0 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
    QPainter p(&image);
    timeline.paintTo(p);
    p.end();
    cpu.push_back(cpuMs(CLOCK_THREAD_CPUTIME_ID) - c0);
    wall.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], wall.back(), cpu[cpu.size() / 2], cpu.back()};
}

void printFrames(const char* what, const FrameTimes& f) {
  std::printf("frame, %-28s wall median %6.2f ms, worst %6.2f ms | CPU median %6.2f ms, worst %6.2f ms\n", what,
              f.median_ms, f.worst_ms, f.cpu_median_ms, f.cpu_worst_ms);
}

// The process's peak resident memory.
long peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr, "usage: gui_bench [--ops N] [--ranks R] [--dir DIR] [--frames F] [--open auto|summary|full] "
                         "[--expand-rank R]\n");
    return 2;
  }
  if (std::getenv("QT_QPA_PLATFORM") == nullptr) setenv("QT_QPA_PLATFORM", "offscreen", 1);

  std::error_code ec;
  if (!std::filesystem::exists(args.dir / "rank-0.sqlite", ec)) {
    std::filesystem::create_directories(args.dir, ec);
    QElapsedTimer t;
    t.start();
    gui::bench::SyntheticRunStats stats;
    std::string error;
    if (!gui::bench::writeSyntheticRun(args.dir, args.run, stats, error)) {
      std::fprintf(stderr, "gui_bench: cannot write the synthetic run: %s\n", error.c_str());
      return 1;
    }
    std::printf("wrote %lld ops, %lld API calls, %lld ranges (%lld iterations x %d ranks) to %s in %.1f s\n",
                static_cast<long long>(stats.ops), static_cast<long long>(stats.api_calls),
                static_cast<long long>(stats.ranges), static_cast<long long>(stats.iterations), args.run.ranks,
                args.dir.c_str(), static_cast<double>(t.elapsed()) / 1000);
  }

  QApplication app(argc, argv);
  gui::MainWindow window;
  window.resize(1600, 1000);
  window.show();
  QApplication::processEvents();

  QElapsedTimer clock;
  double first_paint_ms = 0, analysed_ms = 0, cpu_at_open = 0, first_paint_cpu_ms = 0;
  std::vector<std::pair<QString, double>> stages;
  QObject::connect(&window.loader(), &gui::RunLoader::progress, [&](const QString& stage, qint64, qint64) {
    // The loader names each store it reads: one stage for all of them.
    const QString name = stage.endsWith(QLatin1String(".sqlite")) ? QStringLiteral("reading stores") : stage;
    if (stages.empty() || stages.back().first != name) stages.emplace_back(name, static_cast<double>(clock.nsecsElapsed()) / 1e6);
  });
  QEventLoop loop;
  QObject::connect(&window, &gui::MainWindow::runsShown, [&] {
    window.timeline()->repaint();  // the first paint, synchronously
    first_paint_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    first_paint_cpu_ms = cpuMs(CLOCK_PROCESS_CPUTIME_ID) - cpu_at_open;
  });
  QObject::connect(&window, &gui::MainWindow::finishedLoading, [&] {
    analysed_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    loop.quit();
  });
  QObject::connect(&window, &gui::MainWindow::loadFailed, [&](const QString& message) {
    std::fprintf(stderr, "gui_bench: %s\n", message.toUtf8().constData());
    loop.exit(1);
  });
  clock.start();
  cpu_at_open = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
  window.open({args.dir}, std::nullopt, args.open);
  if (loop.exec() != 0) return 1;
  const bool summary = window.model().run(0).summary.has_value();
  std::printf("opened: %s\n", summary ? "on its analysis results (analysis.sqlite)" : "every store");
  std::printf("time to first paint: %.0f ms wall, %.0f ms CPU (all threads)\n", first_paint_ms, first_paint_cpu_ms);
  std::printf("analysis ready:      %.0f ms\n", analysed_ms);
  if (args.expand_rank >= 0) {
    const auto rank = static_cast<gui::Index>(args.expand_rank);
    clock.restart();
    if (!window.loadRankRows(0, rank)) {
      std::fprintf(stderr, "gui_bench: --expand-rank %ld: the run was not opened on its summary, or has no such rank\n",
                   args.expand_rank);
      return 1;
    }
    if (loop.exec() != 0) return 1;
    std::printf("a rank expanded:     %.0f ms (%zu ops of rank row %ld read)\n", first_paint_ms,
                window.model().run(0).model.ops.size(), args.expand_rank);
  }

  std::size_t ops = 0;
  for (std::uint32_t r = 0; r < window.model().runCount(); ++r) ops += window.model().run(r).model.ops.size();
  std::printf("run: %zu ops on %zu lanes, %zu ranks\n", ops, window.model().laneCount(),
              window.model().run(0).model.ranks.size());
  std::printf("loader stages (ms from open): ");
  for (const auto& [stage, at] : stages) std::printf("%s %.0f; ", stage.toUtf8().constData(), at);
  std::printf("\n");
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("machine: %ld cores, load average %.1f\n", sysconf(_SC_NPROCESSORS_ONLN), load[0]);
  std::printf("peak RSS: %ld MB\n", peakRssMb());

  gui::TimelineWidget& timeline = *window.timeline();
  std::printf("timeline: %d x %d px\n", timeline.width(), timeline.height());
  timeline.fitAll();
  const FrameTimes out = paintFrames(timeline, args.frames);
  const auto& spans = window.model().run(0).iteration_spans;
  const auto& mid_span = spans[spans.size() / 2];
  timeline.fitRange(mid_span.start, mid_span.end);
  const FrameTimes mid = paintFrames(timeline, args.frames);
  const std::int64_t centre = (mid_span.start + mid_span.end) / 2;
  timeline.fitRange(centre - 25'000, centre + 25'000);
  const FrameTimes in = paintFrames(timeline, args.frames);
  const std::string out_label = "zoomed out (" + std::to_string((window.model().endNs() - window.model().beginNs()) / 1'000'000) + " ms):";
  const std::string mid_label = "one iteration (" + std::to_string((mid_span.end - mid_span.start) / 1'000'000) + " ms):";
  printFrames(out_label.c_str(), out);
  printFrames(mid_label.c_str(), mid);
  printFrames("50 us:", in);
  return 0;
}
