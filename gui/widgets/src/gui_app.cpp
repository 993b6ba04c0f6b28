#include "syncopate/gui/widgets/gui_app.hpp"

#include <QApplication>
#include <QEventLoop>
#include <QPixmap>

#include "syncopate/gui/widgets/main_window.hpp"

namespace syncopate::gui {

namespace {

// Loads the runs and waits until everything is shown or the load failed; the error, if any.
QString loadAndWait(MainWindow& window, const GuiOptions& options) {
  QEventLoop loop;
  QObject::connect(&window, &MainWindow::finishedLoading, &loop, &QEventLoop::quit);
  QObject::connect(&window, &MainWindow::loadFailed, &loop, &QEventLoop::quit);
  window.open(options.runs, options.iteration, options.open);
  if (!window.finished() && window.lastError().isEmpty()) loop.exec();
  return window.lastError();
}

std::string iterationRange(const MainWindow& window) {
  const TimelineModel& model = window.model();
  if (model.runCount() == 0 || model.run(0).iteration_spans.empty()) return "it has none";
  const auto& spans = model.run(0).iteration_spans;
  return "it has " + std::to_string(spans.front().number) + " to " + std::to_string(spans.back().number);
}

}  // namespace

trace::Status saveScreenshot(const GuiOptions& options) {
  MainWindow window;
  window.resize(options.width, options.height);
  for (LaneKind k : options.hidden_lanes) window.setLaneKindShown(k, false);
  window.show();
  const QString error = loadAndWait(window, options);
  if (!error.isEmpty()) return trace::failure(error.toStdString());
  if (options.iteration && !window.showIteration(*options.iteration)) {
    return trace::failure("the run has no iteration " + std::to_string(*options.iteration) + " (" +
                          iterationRange(window) + "); pass one of those to --iteration.");
  }
  QApplication::processEvents();
  const QPixmap shot = window.grab();
  if (!options.screenshot || !shot.save(QString::fromStdString(options.screenshot->string()), "PNG")) {
    return trace::failure("cannot write the screenshot to " + (options.screenshot ? options.screenshot->string() : std::string("(none)")) +
                          "; check that its folder exists and is writable.");
  }
  return {};
}

int runInteractive(const GuiOptions& options) {
  MainWindow window;
  window.resize(options.width, options.height);
  for (LaneKind k : options.hidden_lanes) window.setLaneKindShown(k, false);
  window.show();
  window.open(options.runs, options.iteration, options.open);
  return QApplication::exec();
}

}  // namespace syncopate::gui
