// The report's reader and drawing: JSON lines with a half-written tail, a bad line named, one
// value per step after a resume, and charts that draw exactly the points they are given.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "slimtrain/core/error.hpp"
#include "slimtrain/report/html_report.hpp"
#include "slimtrain/report/svg_chart.hpp"

namespace fs = std::filesystem;
namespace rp = slimtrain::report;

namespace {

class RunDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("slimtrain-report-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / "metrics.jsonl") << text; }
  fs::path dir_;
};

TEST_F(RunDir, AHalfWrittenLastLineIsLeftOutAndABadLineElsewhereIsNamed) {
  write(
      "{\"event\":\"start\",\"time\":1,\"total_steps\":8}\n"
      "{\"event\":\"train\",\"step\":4,\"loss\":2.0}\n"
      "{\"event\":\"train\",\"st");
  rp::RunData run = rp::load_run(dir_.string());
  EXPECT_EQ(run.events.size(), 2u);
  EXPECT_TRUE(run.partial_tail);
  EXPECT_EQ(run.state(), "running (or ended without a record)");
  write("{\"event\":\"start\"}\nnot json\n{\"event\":\"done\"}\n");
  try {
    rp::load_run(dir_.string());
    FAIL() << "a bad line was accepted";
  } catch (const slimtrain::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("metrics.jsonl:2: not a JSON object"), std::string::npos)
        << e.what();
  }
}

TEST_F(RunDir, AStepRunAgainAfterAResumeKeepsItsLastValue) {
  write(
      "{\"event\":\"start\",\"resumed_at_step\":0}\n"
      "{\"event\":\"train\",\"step\":4,\"loss\":2.0,\"step_ms\":{\"data\":1.5}}\n"
      "{\"event\":\"train\",\"step\":8,\"loss\":1.0,\"step_ms\":{\"data\":1.0}}\n"
      "{\"event\":\"eval_skipped\",\"step\":8,\"reason\":\"rank 1 late by 3 s\"}\n"
      "{\"event\":\"straggler\",\"step\":8,\"message\":\"rank 1 on n2 is 40% slower\"}\n"
      "{\"event\":\"failed\",\"step\":9,\"reason\":\"deadline\"}\n"
      "{\"event\":\"start\",\"resumed_at_step\":4}\n"
      "{\"event\":\"train\",\"step\":8,\"loss\":0.5,\"step_ms\":{\"data\":0.5}}\n");
  const rp::RunData run = rp::load_run(dir_.string());
  const rp::Points loss = run.series("train", "loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss[1], std::make_pair(8.0, 0.5));
  EXPECT_EQ(run.series("train", "step_ms/data").front(), std::make_pair(4.0, 1.5));
  EXPECT_EQ(run.state(), "running (or ended without a record)");  // the second launch goes on
  const std::string html = rp::render_report({run});
  EXPECT_NE(html.find("<title>resume at step 4: resumed from the checkpoint of step 4"),
            std::string::npos);
  EXPECT_NE(html.find("<title>failed at step 9: deadline"), std::string::npos);
  EXPECT_NE(html.find("<title>skip at step 8: rank 1 late by 3 s"), std::string::npos);
  EXPECT_NE(html.find("<title>slow at step 8: rank 1 on n2 is 40% slower"), std::string::npos);
  EXPECT_NE(html.find("<td>eval_skipped</td><td>rank 1 late by 3 s</td>"), std::string::npos);
}

TEST(Charts, EveryGivenPointIsDrawnAndTextIsEscaped) {
  rp::ChartFrame frame;
  frame.title = "loss <&> \"x\"";
  rp::Series a{"a<b", "#123456", {{0, 1}, {1, 0.5}, {2, 0.25}}, false};
  rp::Series nan{"nan", "#654321", {{0, 1}, {1, std::nan("")}}, true};
  const std::string svg = rp::line_chart(frame, {a, nan}, {{1, "skip", "late <rank>", "#f00"}});
  EXPECT_NE(svg.find("loss &lt;&amp;&gt; &quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"a&lt;b\" data-points=\"3\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"nan\" data-points=\"1\""), std::string::npos);
  EXPECT_NE(svg.find("<title>late &lt;rank&gt;</title>"), std::string::npos);
  EXPECT_NE(rp::line_chart(frame, {}).find("no data yet"), std::string::npos);
  const std::string map = rp::heatmap("cm", {{5, 1}, {0, 7}}, {"x", "y"});
  std::size_t cells = 0;
  for (auto at = map.find("class=\"cell\""); at != std::string::npos;
       at = map.find("class=\"cell\"", at + 1))
    ++cells;
  EXPECT_EQ(cells, 4u);
}

}  // namespace
