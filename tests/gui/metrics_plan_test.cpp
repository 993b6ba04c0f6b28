// The metrics table (rows per rank and iteration, numeric sorting, jump targets), the compare
// table, the plan reader (a plan built here as the tuner documents it, and broken ones), the
// prediction check and the plan watcher that shows a plan as soon as it is written.
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "sample_runs.hpp"
#include "syncopate/gui/model/metrics_models.hpp"
#include "syncopate/gui/model/plan_summary.hpp"

using namespace syncopate::gui;
using namespace syncopate::gui::testing;
namespace tuner = syncopate::tuner;

namespace {

void analyse(TimelineModel& m, std::uint32_t run) {
  auto a = analyzeRun(m.run(run));
  QVERIFY(a.ok());
  m.setAnalysis(run, std::make_shared<const syncopate::analyzer::Analysis>(std::move(a).value()));
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
}

// A tune report as docs/tuner.md (`syncopate tune`) documents it.
// A plan as `syncopate tune` writes it (the tuner's own writer, so its checksum holds).
std::string planText() {
  tuner::Plan p;
  p.source_run = "runs/baseline";
  p.ranks = 4;
  p.predicted_iterations = {2, 3, 4};
  p.created_by = "0.1.0";
  p.knobs.communication_stream = true;
  p.knobs.bucket_bytes = 26214400;
  p.knobs.order = tuner::Order::Ready;
  p.knobs.priority_tail = 4;
  p.knobs.per_bucket_waits = false;
  p.prediction = {0.19, 0.188, -0.0105, 0.15, 1.2533, 0.14, 0.14, 0.09};
  p.why = "Gradient all-reduces are exposed for 40% of the step; overlapping them with backward hides most of it.";
  p.compute_slowdown = 0.1;
  p.communication_slowdown = 0.15;
  p.interference_measured = true;
  return tuner::planJson(p);
}

const char* kTune = R"({
  "run": "runs/baseline", "ranks": 4, "measured_iteration_ms": 0.19, "replay_iteration_ms": 0.188,
  "replay_error": -0.0105, "ideal_iteration_ms": 0.14,
  "candidates": [
    {"schedule": "one-step delayed", "predicted_iteration_ms": 0.14, "gain": 0.255, "changes_training_mathematics": true,
     "recommended": false},
    {"schedule": "communication stream, 25 MiB buckets", "predicted_iteration_ms": 0.15, "gain": 0.202,
     "changes_training_mathematics": false, "recommended": true},
    {"schedule": "no fusion", "error": "a group could not be modelled", "changes_training_mathematics": false,
     "recommended": false}
  ],
  "recommended": 1
})";

// A DDP run's report: no plan for the runtime, the bucket caps predicted, one recommended.
const char* kTuneWithSettings = R"json({
  "run": "runs/ddp", "ranks": 4, "measured_iteration_ms": 86.24, "replay_iteration_ms": 86.24,
  "replay_error": 0.0, "ideal_iteration_ms": 80.559, "candidates": [], "recommended": -1,
  "recommendations": [
    {"setting": "bucket_cap_mb", "value": "5", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=5)",
     "predicted_iteration_ms": 82.33, "gain": 0.045, "buckets": 49}
  ],
  "framework": {"ddp": {"found": true, "buckets": 4, "bucket_caps": [
    {"setting": "bucket_cap_mb", "value": "1", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=1)",
     "predicted_iteration_ms": 82.413, "gain": 0.044, "buckets": 66},
    {"setting": "bucket_cap_mb", "value": "5", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=5)",
     "predicted_iteration_ms": 82.33, "gain": 0.045, "buckets": 49},
    {"setting": "bucket_cap_mb", "value": "200", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=200)",
     "predicted_iteration_ms": 86.24, "gain": 0.0, "buckets": 4}
  ]}}
})json";

// A trace's report: DDP's caps and first bucket predicted from its buckets alone, one cap
// recommended.
const char* kTuneOfATrace = R"json({
  "run": "runs/imported", "ranks": 1, "measured_iteration_ms": 20.0, "replay_iteration_ms": 20.1,
  "replay_error": 0.005, "ideal_iteration_ms": 15.0, "candidates": [], "recommended": -1,
  "recommendations": [
    {"setting": "bucket_cap_mb", "value": "50", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=50)",
     "predicted_iteration_ms": 19.1, "gain": 0.05, "buckets": 3}
  ],
  "framework": {"ddp": {"found": false, "why_not": "no addresses", "from_bucket_sizes": {"buckets": 5, "bucket_caps": [
    {"setting": "bucket_cap_mb", "value": "25", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=25)",
     "predicted_iteration_ms": 20.1, "gain": 0.0, "buckets": 5},
    {"setting": "bucket_cap_mb", "value": "50", "how_to_apply": "DistributedDataParallel(model, ..., bucket_cap_mb=50)",
     "predicted_iteration_ms": 19.1, "gain": 0.05, "buckets": 3}
  ], "first_buckets": [
    {"setting": "_DEFAULT_FIRST_BUCKET_BYTES", "value": "1048576",
     "how_to_apply": "torch.nn.parallel.DistributedDataParallel(model, ...) without bucket_cap_mb",
     "predicted_iteration_ms": 20.1, "gain": 0.0, "buckets": 5, "with": "bucket_cap_mb unset"}
  ]}}}
})json";

// A report of PyTorch FSDP recorded with backward_prefetch=None: BACKWARD_PRE recommended.
const char* kTuneOfFsdp = R"json({
  "run": "runs/fsdp", "ranks": 4, "measured_iteration_ms": 27.241, "replay_iteration_ms": 27.241,
  "replay_error": 0.0, "ideal_iteration_ms": 22.621, "candidates": [], "recommended": -1,
  "recommendations": [
    {"setting": "backward_prefetch", "value": "BACKWARD_PRE",
     "how_to_apply": "FullyShardedDataParallel(model, ..., backward_prefetch=BackwardPrefetch.BACKWARD_PRE)",
     "predicted_iteration_ms": 24.795, "gain": 0.09, "buckets": 5}
  ],
  "framework": {"fsdp": {"found": true, "backward_prefetch": [
    {"setting": "backward_prefetch", "value": "None", "how_to_apply": "as the run was recorded",
     "predicted_iteration_ms": 27.241, "gain": 0.0, "buckets": 5},
    {"setting": "backward_prefetch", "value": "BACKWARD_PRE",
     "how_to_apply": "FullyShardedDataParallel(model, ..., backward_prefetch=BackwardPrefetch.BACKWARD_PRE)",
     "predicted_iteration_ms": 24.795, "gain": 0.09, "buckets": 5}
  ], "forward_prefetch": [
    {"setting": "forward_prefetch", "value": "False", "how_to_apply": "as the run was recorded",
     "predicted_iteration_ms": 27.241, "gain": 0.0, "buckets": 5}
  ], "limit_all_gathers": [
    {"setting": "limit_all_gathers", "value": "False", "how_to_apply": "as the run was recorded",
     "predicted_iteration_ms": 27.241, "gain": 0.0, "buckets": 5}
  ]}}
})json";

// A DDP run recorded with its gradients copied into the buckets: gradient_as_bucket_view=True
// predicted and recommended beside the bucket caps.
const char* kTuneOfDdpViews = R"json({
  "run": "runs/ddp", "ranks": 4, "measured_iteration_ms": 82.589, "replay_iteration_ms": 82.589,
  "replay_error": 0.0, "ideal_iteration_ms": 80.559, "candidates": [], "recommended": -1,
  "recommendations": [
    {"setting": "gradient_as_bucket_view", "value": "True",
     "how_to_apply": "torch.nn.parallel.DistributedDataParallel(model, ..., gradient_as_bucket_view=True)",
     "predicted_iteration_ms": 81.598, "gain": 0.012, "buckets": 17}
  ],
  "framework": {"ddp": {"found": true, "buckets": 17, "bucket_caps": [
    {"setting": "bucket_cap_mb", "value": "25",
     "how_to_apply": "torch.nn.parallel.DistributedDataParallel(model, ..., bucket_cap_mb=25)",
     "predicted_iteration_ms": 82.632, "gain": -0.001, "buckets": 17}
  ], "first_buckets": [], "gradient_as_bucket_view": {"recorded": false, "values": [
    {"setting": "gradient_as_bucket_view", "value": "False", "how_to_apply": "as the run was recorded",
     "predicted_iteration_ms": 82.589, "gain": 0.0, "buckets": 17},
    {"setting": "gradient_as_bucket_view", "value": "True",
     "how_to_apply": "torch.nn.parallel.DistributedDataParallel(model, ..., gradient_as_bucket_view=True)",
     "predicted_iteration_ms": 81.598, "gain": 0.012, "buckets": 17}
  ]}}}
})json";

// A run whose report shows DDP in its trace, a sharded optimizer's overlaps (one recorded on, one
// recommended), NCCL_MAX_CTAS, CUDA_DEVICE_MAX_CONNECTIONS and channel counts predicted.
const char* kTuneWithChannels = R"json({
  "run": "runs/ddp", "ranks": 4, "measured_iteration_ms": 82.589, "replay_iteration_ms": 82.589,
  "replay_error": 0.0, "ideal_iteration_ms": 80.559, "candidates": [], "recommended": -1,
  "recommendations": [
    {"setting": "NCCL_MAX_CTAS", "value": "4", "how_to_apply": "export NCCL_MAX_CTAS=4 in the job's environment",
     "predicted_iteration_ms": 81.53, "gain": 0.0128, "buckets": 0},
    {"setting": "overlap_grad_reduce", "value": "on", "how_to_apply": "--overlap-grad-reduce",
     "predicted_iteration_ms": 77.0, "gain": 0.0677, "buckets": 17},
    {"setting": "bucket_size", "value": "5000000", "how_to_apply": "--overlap-grad-reduce --ddp-bucket-size 5000000",
     "predicted_iteration_ms": 75.0, "gain": 0.0919, "buckets": 17, "with": "overlap_grad_reduce=on"}
  ],
  "channels": {"searched": true, "candidates": [
    {"collective": "AllReduce", "min_bytes": 9446400, "max_bytes": 47222784, "channels": 4,
     "predicted_iteration_ms": 81.53, "gain": 0.0128}
  ]},
  "framework": {
    "detected": [{"name": "PyTorch DDP", "evidence": "6 DistributedDataParallel.forward ranges",
                  "settings": {"buckets per step": "5"}}],
    "ddp": {"found": false, "why_not": "no reducer"},
    "sharded": {"found": true, "reduce_scatters": 17, "gradient_bytes": 481941504, "all_gathers": 17,
      "parameter_bytes": 481941504, "overlap_grad_reduce": [
      {"setting": "overlap_grad_reduce", "value": "off", "how_to_apply": "as the run was recorded",
       "predicted_iteration_ms": 82.589, "gain": 0.0, "buckets": 17},
      {"setting": "overlap_grad_reduce", "value": "on", "how_to_apply": "--overlap-grad-reduce",
       "predicted_iteration_ms": 77.0, "gain": 0.0677, "buckets": 17}
    ], "overlap_param_gather": [
      {"setting": "overlap_param_gather", "value": "on", "how_to_apply": "as the run was recorded",
       "predicted_iteration_ms": 82.589, "gain": 0.0, "buckets": 17}
    ], "bucket_size": {"recorded_buckets_rewritten_ms": 82.589, "values": [
      {"setting": "bucket_size", "value": "5000000", "how_to_apply": "--ddp-bucket-size 5000000",
       "predicted_iteration_ms": 82.0, "gain": 0.0071, "buckets": 17},
      {"setting": "bucket_size", "value": "5000000", "how_to_apply": "--overlap-grad-reduce --ddp-bucket-size 5000000",
       "predicted_iteration_ms": 75.0, "gain": 0.0919, "buckets": 17, "with": "overlap_grad_reduce=on"}
    ]}},
    "nccl": {"max_ctas": [
      {"setting": "NCCL_MAX_CTAS", "value": "4", "how_to_apply": "export NCCL_MAX_CTAS=4 in the job's environment",
       "predicted_iteration_ms": 81.53, "gain": 0.0128, "buckets": 0}
    ]},
    "cuda": {"max_connections": {"recorded": 4, "set": true, "values": [
      {"setting": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "8",
       "how_to_apply": "unset CUDA_DEVICE_MAX_CONNECTIONS",
       "predicted_iteration_ms": 82.589, "gain": 0.0, "buckets": 0}
    ]}}}
})json";

}  // namespace

class MetricsPlanTest : public QObject {
  Q_OBJECT
 private slots:
  void metricsRowsPerRankAndIteration() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    MetricsTableModel table(&m);
    table.refresh();
    QCOMPARE(table.rowCount(), 0);  // nothing before the analysis
    analyse(m, 0);
    table.refresh();
    QCOMPARE(table.rowCount(), 4);  // 2 ranks x 2 iterations
    QCOMPARE(table.columnCount(), int{MetricsTableModel::ColumnCount});
    // Iteration 1 of rank 1: window [5, 105) µs, communication 30 µs, all exposed.
    int row = -1;
    for (int r = 0; r < table.rowCount(); ++r) {
      if (table.data(table.index(r, MetricsTableModel::Iteration), Qt::DisplayRole).toInt() == 1 &&
          table.data(table.index(r, MetricsTableModel::Rank), Qt::DisplayRole).toInt() == 1)
        row = r;
    }
    QVERIFY(row >= 0);
    QCOMPARE(table.data(table.index(row, MetricsTableModel::IterationTime), Qt::DisplayRole).toString(), QString("0.100"));
    QCOMPARE(table.data(table.index(row, MetricsTableModel::Exposed), MetricsTableModel::SortRole).toLongLong(), us(30));
    // All of it all-reduce: a sharded job's exposed all-gathers and reduce-scatters have columns of their own.
    QCOMPARE(table.data(table.index(row, MetricsTableModel::ExposedAllGather), MetricsTableModel::SortRole).toLongLong(),
             qlonglong{0});
    QCOMPARE(table.data(table.index(row, MetricsTableModel::ExposedReduceScatter), MetricsTableModel::SortRole).toLongLong(),
             qlonglong{0});
    QCOMPARE(table.headerData(MetricsTableModel::ExposedAllGather, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("Exposed all-gather (ms)"));
    QCOMPARE(table.data(table.index(row, MetricsTableModel::OverlapRatio), Qt::DisplayRole).toString(), QString("0.0 %"));
    const JumpTarget t = table.target(row);
    QCOMPARE(t.iteration, 1);
    QCOMPARE(t.rank, syncopate::analyzer::Index{1});
    QCOMPARE(t.start, us(5));
    QCOMPARE(t.end, us(105));
  }

  void sortingIsNumeric() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    analyse(m, 0);
    MetricsTableModel table(&m);
    table.refresh();
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&table);
    proxy.setSortRole(MetricsTableModel::SortRole);
    proxy.sort(MetricsTableModel::IterationTime, Qt::DescendingOrder);
    qlonglong prev = std::numeric_limits<qlonglong>::max();
    for (int r = 0; r < proxy.rowCount(); ++r) {
      const qlonglong v = proxy.data(proxy.index(r, MetricsTableModel::IterationTime), MetricsTableModel::SortRole).toLongLong();
      QVERIFY(v <= prev);
      prev = v;
    }
    // The first iterations are the longest ([5, 105) µs on both ranks), then the second ones
    // ([105, 190): both ranks' last all-reduce ends at 190 µs).
    auto length = [&](int r) {
      const JumpTarget t = table.target(proxy.mapToSource(proxy.index(r, 0)).row());
      return t.end - t.start;
    };
    QCOMPARE(length(0), us(100));
    QCOMPARE(length(1), us(100));
    QCOMPARE(length(2), us(85));
    QCOMPARE(length(3), us(85));
  }

  void compareTablePutsRunsSideBySide() {
    TimelineModel m;
    m.setRuns({prepared(twoRankRun(), 0, "A"), prepared(twoRankRun(5'000'000), 1, "B")});
    CompareTableModel cmp(&m);
    cmp.refresh();
    QCOMPARE(cmp.rowCount(), 0);
    analyse(m, 0);
    analyse(m, 1);
    cmp.refresh();
    QCOMPARE(cmp.rowCount(), 3);  // all ranks, rank 0, rank 1
    QCOMPARE(cmp.data(cmp.index(0, CompareTableModel::Rank), Qt::DisplayRole).toString(), QString("all"));
    QCOMPARE(cmp.data(cmp.index(1, CompareTableModel::IterationA), CompareTableModel::SortRole),
             cmp.data(cmp.index(1, CompareTableModel::IterationB), CompareTableModel::SortRole));
    QCOMPARE(cmp.data(cmp.index(0, CompareTableModel::Speedup), Qt::DisplayRole).toString(), QString("1.000×"));
    MetricsTableModel table(&m);
    table.refresh();
    QCOMPARE(table.rowCount(), 8);
    QCOMPARE(table.data(table.index(7, MetricsTableModel::Run), Qt::DisplayRole).toString(), QString("B"));
  }

  void readsTheFrameworkSettingsOfATuneReport() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(file, kTuneWithSettings);
    auto tune = readTune(file);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->settings.size(), std::size_t{3});
    QCOMPARE(tune->settings[0].value, std::string("1"));
    QCOMPARE(tune->settings[0].buckets, std::size_t{66});
    QVERIFY(!tune->settings[0].recommended);
    QVERIFY(tune->settings[1].recommended);
    QCOMPARE(*tune->settings[1].predicted_ms, 82.33);
    const TuneSetting* chosen = tune->recommendedSetting();
    QVERIFY(chosen != nullptr);
    QCOMPARE(chosen->how_to_apply, std::string("DistributedDataParallel(model, ..., bucket_cap_mb=5)"));
    // A report of a run without DDP has none.
    write(file, kTune);
    auto plain = readTune(file);
    QVERIFY(plain.ok());
    QVERIFY(plain->settings.empty());
    QVERIFY(plain->recommendedSetting() == nullptr);
  }

  void readsTheCapsATraceWasPredictedFromItsBuckets() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(file, kTuneOfATrace);
    auto tune = readTune(file);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->settings.size(), std::size_t{3});
    QCOMPARE(tune->settings[0].value, std::string("25"));
    QVERIFY(!tune->settings[0].recommended);
    QCOMPARE(tune->settings[1].buckets, std::size_t{3});
    QCOMPARE(*tune->settings[1].predicted_ms, 19.1);
    QVERIFY(tune->recommendedSetting() == &tune->settings[1]);
    // The first bucket, predicted with the cap unset, after the caps.
    QCOMPARE(tune->settings[2].setting, std::string("_DEFAULT_FIRST_BUCKET_BYTES"));
    QCOMPARE(tune->settings[2].value, std::string("1048576 with bucket_cap_mb unset"));
    QCOMPARE(tune->settings[2].buckets, std::size_t{5});
    QVERIFY(!tune->settings[2].recommended);
  }

  void readsFsdpsSettings() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(file, kTuneOfFsdp);
    auto tune = readTune(file);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->settings.size(), std::size_t{4});
    QCOMPARE(tune->settings[0].setting, std::string("backward_prefetch"));
    QCOMPARE(tune->settings[0].value, std::string("None"));
    QVERIFY(!tune->settings[0].recommended);
    QCOMPARE(tune->settings[1].value, std::string("BACKWARD_PRE"));
    QVERIFY(tune->settings[1].recommended);
    QCOMPARE(*tune->settings[1].predicted_ms, 24.795);
    QCOMPARE(tune->settings[2].setting, std::string("forward_prefetch"));
    QCOMPARE(tune->settings[3].setting, std::string("limit_all_gathers"));
    QVERIFY(tune->recommendedSetting() == &tune->settings[1]);
  }

  void readsDdpsGradientAsBucketView() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(file, kTuneOfDdpViews);
    auto tune = readTune(file);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->settings.size(), std::size_t{3});
    QCOMPARE(tune->settings[0].setting, std::string("bucket_cap_mb"));
    QCOMPARE(tune->settings[1].setting, std::string("gradient_as_bucket_view"));
    QCOMPARE(tune->settings[1].value, std::string("False"));
    QVERIFY(!tune->settings[1].recommended);
    QCOMPARE(tune->settings[2].value, std::string("True"));
    QVERIFY(tune->settings[2].recommended);
    QCOMPARE(*tune->settings[2].predicted_ms, 81.598);
    QVERIFY(tune->recommendedSetting() == &tune->settings[2]);
  }

  void readsTheFrameworkTheRunShowsAndNcclsSettings() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(file, kTuneWithChannels);
    auto tune = readTune(file);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->frameworks.size(), std::size_t{1});
    QCOMPARE(tune->frameworks[0],
             std::string("PyTorch DDP (6 DistributedDataParallel.forward ranges); buckets per step: 5"));
    QCOMPARE(tune->settings.size(), std::size_t{8});
    QCOMPARE(tune->settings[0].setting, std::string("overlap_grad_reduce"));
    QCOMPARE(tune->settings[0].value, std::string("off"));
    QCOMPARE(tune->settings[0].buckets, std::size_t{17});
    QVERIFY(!tune->settings[0].recommended);
    QCOMPARE(tune->settings[1].setting, std::string("overlap_grad_reduce"));
    QCOMPARE(tune->settings[1].value, std::string("on"));
    QVERIFY(tune->settings[1].recommended);
    QCOMPARE(*tune->settings[1].predicted_ms, 77.0);
    QCOMPARE(tune->settings[2].setting, std::string("overlap_param_gather"));
    QCOMPARE(tune->settings[2].value, std::string("on"));
    QVERIFY(!tune->settings[2].recommended);  // as recorded: not among the recommendations
    QCOMPARE(tune->settings[3].setting, std::string("bucket_size"));
    QCOMPARE(tune->settings[3].value, std::string("5000000"));
    QCOMPARE(tune->settings[3].how_to_apply, std::string("--ddp-bucket-size 5000000"));
    QVERIFY(!tune->settings[3].recommended);  // under 2%; the same size with the overlap on is
    QCOMPARE(tune->settings[4].value, std::string("5000000 with overlap_grad_reduce=on"));
    QCOMPARE(tune->settings[4].how_to_apply, std::string("--overlap-grad-reduce --ddp-bucket-size 5000000"));
    QVERIFY(tune->settings[4].recommended);
    QCOMPARE(tune->settings[5].setting, std::string("NCCL_MAX_CTAS"));
    QVERIFY(tune->settings[5].recommended);
    QCOMPARE(tune->settings[6].setting, std::string("CUDA_DEVICE_MAX_CONNECTIONS"));
    QCOMPARE(tune->settings[6].value, std::string("8"));
    QVERIFY(!tune->settings[6].recommended);  // no gain: not among the recommendations
    QCOMPARE(*tune->settings[6].predicted_ms, 82.589);
    QCOMPARE(tune->settings[7].setting, std::string("nccl_channels"));
    QCOMPARE(tune->settings[7].value, std::string("AllReduce on 4 channels"));
    QVERIFY(!tune->settings[7].recommended);
    QCOMPARE(*tune->settings[7].predicted_ms, 81.53);
  }

  void readsADocumentedPlan() {
    QTemporaryDir dir;
    const std::filesystem::path run(dir.path().toStdString());
    write(run / kPlanFileName, planText());
    auto plan = readPlan(run / kPlanFileName);
    QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
    QCOMPARE(plan->plan.version, std::string("1.3"));
    QVERIFY(!plan->plan.changesTrainingMathematics());
    QCOMPARE(plan->plan.prediction.iteration_ms, 0.15);
    QCOMPARE(plan->plan.prediction.ideal_ms, 0.14);
    QCOMPARE(plan->plan.prediction.baseline_replay_ms, 0.188);
    QCOMPARE(plan->plan.prediction.replay_error, -0.0105);
    QCOMPARE(plan->plan.source_run, std::string("runs/baseline"));
    QCOMPARE(plan->description, std::string("start at producers, buckets <= 25 MiB, ready order, last 4 first layers "
                                            "first, updates wait for all"));
    QCOMPARE(plan->knobs.size(), std::size_t{8});
    QCOMPARE(plan->knobs[0], (std::pair<std::string, std::string>("bucket_bytes", "26214400")));
    QCOMPARE(plan->knobs[1], (std::pair<std::string, std::string>("communication_stream", "yes")));

    write(run / kTuneFileName, kTune);
    auto tune = readTune(run / kTuneFileName);
    QVERIFY2(tune.ok(), tune.ok() ? "" : tune.message().c_str());
    QCOMPARE(tune->candidates.size(), std::size_t{3});
    QVERIFY(tune->candidates[0].changes_training_math);
    QVERIFY(!tune->candidates[0].recommended);
    QVERIFY(tune->candidates[1].recommended);
    QCOMPARE(*tune->candidates[1].gain, 0.202);
    QVERIFY(!tune->candidates[2].predicted_ms.has_value());
    QCOMPARE(tune->candidates[2].error, std::string("a group could not be modelled"));

    // Predicted versus measured against a run of two iterations: no steady one, so both count:
    // the mean over ranks of each iteration's window, then over the iterations.
    TimelineModel m;
    m.setRuns({prepared(twoRankRun())});
    analyse(m, 0);
    auto all = measureIterations(*m.analysis(0));
    QVERIFY(all.has_value());
    QVERIFY(!all->steady);
    QCOMPARE(all->first_iteration, std::int64_t{1});
    QCOMPARE(all->last_iteration, std::int64_t{2});
    double expected = 0;
    for (const auto& ri : m.analysis(0)->rank_iterations) expected += static_cast<double>(ri.window.end - ri.window.start) / 1e6;
    expected /= static_cast<double>(m.analysis(0)->rank_iterations.size());
    QVERIFY(std::abs(all->mean_ms - expected) < 1e-12);
  }

  // As `syncopate compare`: only iterations 2 and 3 are steady; (150+100)/2 and (150+200)/2 µs
  // average to 0.150 ms, where the mean of every window (0.1025 ms) would count the tail.
  void predictionIsCheckedOnSteadyIterations() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kPlanFileName;
    write(file, planText());
    auto plan = readPlan(file);
    QVERIFY(plan.ok());
    TimelineModel m;
    m.setRuns({prepared(fourIterationRun())});
    analyse(m, 0);
    QCOMPARE(m.analysis(0)->iterations.numbers.size(), std::size_t{4});
    auto check = checkPrediction(*plan, *m.analysis(0));
    QVERIFY(check.has_value());
    QVERIFY(check->measured.steady);
    QCOMPARE(check->measured.first_iteration, std::int64_t{2});
    QCOMPARE(check->measured.last_iteration, std::int64_t{3});
    QVERIFY(std::abs(check->measured.mean_ms - 0.150) < 1e-12);
    QCOMPARE(check->predicted_ms, 0.15);
    QVERIFY(std::abs(check->error) < 1e-12);
  }

  void refusesBrokenPlans() {
    QTemporaryDir dir;
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / kPlanFileName;
    auto missing = readPlan(file);
    QVERIFY(!missing.ok());
    QVERIFY(missing.message().find("does not exist") != std::string::npos);
    write(file, "{\"format\": \"syncopate-plan\", \"version\": ");
    auto truncated = readPlan(file);
    QVERIFY(!truncated.ok());
    QVERIFY(truncated.message().find("not valid JSON") != std::string::npos);
    write(file, R"({"version": 1})");
    QVERIFY(readPlan(file).message().find("not a Syncopate plan") != std::string::npos);
    write(file, R"({"format": "syncopate-plan", "version": "2.0"})");
    auto newer = readPlan(file);
    QVERIFY(!newer.ok());
    QVERIFY(newer.message().find("version 2.0") != std::string::npos);
    write(file, R"({"format": "syncopate-plan", "version": 1})");
    QVERIFY(readPlan(file).message().find("MAJOR.MINOR") != std::string::npos);
    const std::filesystem::path tune = std::filesystem::path(dir.path().toStdString()) / kTuneFileName;
    write(tune, R"({"run": "x"})");
    QVERIFY(readTune(tune).message().find("no \"candidates\"") != std::string::npos);
  }

  void watcherShowsAPlanAsSoonAsItIsWritten() {
    QTemporaryDir dir;
    const std::filesystem::path run_dir(dir.path().toStdString());
    PlanWatcher watcher;
    QSignalSpy spy(&watcher, &PlanWatcher::changed);
    watcher.watch(run_dir);
    QCOMPARE(spy.count(), 1);
    QVERIFY(!watcher.plan().has_value());
    QVERIFY(watcher.error().empty());
    // The tuner writes plan.json (atomically, as a rename over a temporary file).
    write(run_dir / "plan.json.tmp", planText());
    std::filesystem::rename(run_dir / "plan.json.tmp", run_dir / kPlanFileName);
    QTRY_VERIFY_WITH_TIMEOUT(watcher.plan().has_value(), 5000);
    QCOMPARE(watcher.plan()->plan.prediction.speedup, 1.2533);
    QVERIFY(!watcher.tune().has_value());
    write(run_dir / kTuneFileName, kTune);
    QTRY_VERIFY_WITH_TIMEOUT(watcher.tune().has_value(), 5000);
    QCOMPARE(watcher.tune()->candidates.size(), std::size_t{3});
    QVERIFY(!watcher.appliedPlan());
    write(run_dir / "runtime-rank-0.json", "{}");
    QTRY_VERIFY_WITH_TIMEOUT(watcher.appliedPlan(), 5000);
    // A broken rewrite shows its error rather than a stale plan.
    write(run_dir / kPlanFileName, "not json");
    QTRY_VERIFY_WITH_TIMEOUT(!watcher.error().empty(), 5000);
    QVERIFY(!watcher.plan().has_value());
  }
};

QTEST_GUILESS_MAIN(MetricsPlanTest)
#include "metrics_plan_test.moc"
