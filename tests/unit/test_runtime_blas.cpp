// Which BLAS LibTorch calls (slimtrain/runtime/blas.hpp) and the kernels chosen by measurement
// (slimtrain/runtime/blas_kernels.hpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "slimtrain/runtime/blas.hpp"
#include "slimtrain/runtime/blas_kernels.hpp"
#include "slimtrain/runtime/cpu_info.hpp"

namespace slimtrain::runtime {
namespace {

// Restores an environment variable on scope exit.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    const char* v = std::getenv(name);
    had_ = v != nullptr;
    if (had_) value_ = v;
  }
  ~EnvGuard() {
    if (had_)
      setenv(name_, value_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string value_;
};

TEST(Blas, FindsTheLibraryLibTorchCalls) {
  // A product makes LibTorch call sgemm_, which must be the library detect_blas names.
  const torch::Tensor a = torch::ones({64, 64});
  ASSERT_EQ(torch::mm(a, a).sum().item<float>(), 64.0f * 64 * 64);
  const BlasInfo blas = detect_blas();
  ASSERT_FALSE(blas.library.empty()) << "sgemm_ not found in a process that ran torch::mm";
  EXPECT_NE(blas.kind, BlasInfo::Kind::unknown) << blas.describe();
  EXPECT_NE(blas.describe().find(blas.library), std::string::npos);
  if (blas.kind == BlasInfo::Kind::openblas) {
    EXPECT_NE(blas.detail.find("OpenBLAS"), std::string::npos);
    EXPECT_NE(blas.detail.find("kernels for "), std::string::npos);
    EXPECT_EQ(set_blas_threads(blas, 1), 1);
  }
  if (blas.kind == BlasInfo::Kind::reference) {
    EXPECT_EQ(set_blas_threads(blas, 2), 0);
  }
}

KernelRate rate(const std::string& requested, const std::string& kernels, double gflops) {
  return KernelRate{requested, kernels, gflops};
}

TEST(BlasKernels, TheFastestSetWinsOnlyByTheMargin) {
  // Issue 33's figures: Haswell loaded on an AVX-512 EPYC, SkylakeX 1.8x faster.
  EXPECT_EQ(
      fastest_kernels({rate("", "Haswell", 131), rate("Haswell", "Haswell", 130),
                       rate("SkylakeX", "SkylakeX", 235), rate("Cooperlake", "Cooperlake", 230)}),
      "SkylakeX");
  // Within 10% of OpenBLAS's own choice is noise: the own choice stays.
  EXPECT_EQ(fastest_kernels({rate("", "SkylakeX", 154.5), rate("Cooperlake", "Cooperlake", 163.2)}),
            "");
  EXPECT_EQ(fastest_kernels({rate("", "Cooperlake", 185), rate("Haswell", "Haswell", 72)}), "");
  // A forced name that loaded the own set again is not a change.
  EXPECT_EQ(fastest_kernels({rate("", "Zen", 100), rate("Zen", "Zen", 120)}), "");
  // An old release's Prescott fallback (blas.hpp's story) is replaced by any measured set.
  EXPECT_EQ(fastest_kernels({rate("", "Prescott", 37), rate("Haswell", "Haswell", 120)}),
            "Haswell");
  EXPECT_EQ(fastest_kernels({}), "");
}

TEST(BlasKernels, ADecisionSurvivesItsTextAndADamagedTextGivesNone) {
  KernelChoice c;
  c.kernels = "SkylakeX";
  c.rates = {rate("", "Haswell", 131), rate("SkylakeX", "SkylakeX", 235.1)};
  c.how = "measured now, cached in /tmp/x";
  const KernelChoice back = KernelChoice::parse(c.serialise());
  EXPECT_EQ(back.kernels, "SkylakeX");
  ASSERT_EQ(back.rates.size(), 2u);
  EXPECT_EQ(back.own()->kernels, "Haswell");
  EXPECT_DOUBLE_EQ(back.chosen()->gflops, 235.1);
  EXPECT_EQ(back.how, c.how);
  const std::string note = back.describe();
  EXPECT_NE(note.find("chosen by measurement: SkylakeX 235.1 GFLOP/s against OpenBLAS's own "
                      "Haswell 131.0"),
            std::string::npos)
      << note;
  // Kept: the note names the own set and says why the others lost.
  c.kernels.clear();
  EXPECT_NE(KernelChoice::parse(c.serialise()).describe().find("own kernels kept"),
            std::string::npos);
  // A chosen set with no figure, a rate with no number, or no own choice first: nothing trusted.
  EXPECT_TRUE(KernelChoice::parse("kernels SkylakeX\nrate - Haswell 131.0\n").rates.empty());
  EXPECT_TRUE(KernelChoice::parse("kernels -\nrate - Haswell\n").rates.empty());
  EXPECT_TRUE(KernelChoice::parse("kernels -\nrate Haswell Haswell 1.0\n").rates.empty());
  // A user's own setting, and a decision that could not be measured, say so.
  KernelChoice yours;
  yours.yours = "Haswell";
  yours.how = "no cache directory";
  EXPECT_NE(KernelChoice::parse(yours.serialise())
                .describe()
                .find("set by you (Haswell): kernels "
                      "not compared"),
            std::string::npos);
  EXPECT_EQ(yours.slower_than_best_warning(), "");
  KernelChoice none;
  none.how = "the probe took longer than 30 s";
  EXPECT_NE(none.describe().find("not measured (the probe took longer"), std::string::npos);
}

TEST(BlasKernels, AUserSettingIsComparedWithTheBestAndKept) {
  // This EPYC (family 26) in an environment that sets OPENBLAS_CORETYPE=Haswell: OpenBLAS's own
  // choice would be Cooperlake, nearly twice as fast.
  KernelChoice c;
  c.rates = {rate("", "Cooperlake", 185.9), rate("Haswell", "Haswell", 96.2),
             rate("Zen", "Zen", 95.5), rate("SkylakeX", "SkylakeX", 177.0)};
  c.yours = "Haswell";
  c.how = "cached in /tmp/x";
  const KernelChoice back = KernelChoice::parse(c.serialise());
  EXPECT_EQ(back.yours, "Haswell");
  EXPECT_TRUE(back.kernels.empty());  // nothing to load again: the user's set stands
  EXPECT_EQ(back.fastest()->kernels, "Cooperlake");
  const std::string warning = back.slower_than_best_warning();
  EXPECT_NE(warning.find("Haswell kernels, 96.2 GFLOP/s where Cooperlake's run 185.9"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("1.93x"), std::string::npos) << warning;
  EXPECT_NE(warning.find("unset OPENBLAS_CORETYPE"), std::string::npos) << warning;
  EXPECT_NE(back.describe().find("set by you, kept: Haswell 96.2 GFLOP/s, Cooperlake 185.9"),
            std::string::npos)
      << back.describe();
  // Within the margin of the best: kept without a warning.
  c.yours = "SkylakeX";
  EXPECT_EQ(c.slower_than_best_warning(), "");
  EXPECT_NE(c.describe().find("set by you, kept: SkylakeX 177.0 GFLOP/s, no other set 10% faster"),
            std::string::npos)
      << c.describe();
  // A set the probe did not time (not among this CPU's candidates): no comparison, no warning.
  c.yours = "Prescott";
  EXPECT_EQ(c.slower_than_best_warning(), "");
  EXPECT_NE(c.describe().find("not compared (no figure for Prescott)"), std::string::npos);
}

TEST(BlasKernels, CandidatesFollowTheInstructionSets) {
  const CpuInfo epyc = parse_cpu_info(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R45\n"
      "flags\t\t: fpu avx avx2 fma avx512f avx512bw avx512dq avx512vl avx512cd avx512_bf16\n"
      "\nprocessor\t: 1\nmodel name\t: other\n");
  EXPECT_EQ(epyc.model, "AMD EPYC 9R45");
  EXPECT_EQ(epyc.vendor, "AuthenticAMD");
  EXPECT_TRUE(epyc.native_bf16());
  EXPECT_EQ(candidate_kernels(epyc),
            (std::vector<std::string>{"Haswell", "Zen", "SkylakeX", "Cooperlake"}));
  const CpuInfo zen3 =
      parse_cpu_info("processor: 0\nvendor_id: AuthenticAMD\nflags: avx avx2 fma\n");
  EXPECT_FALSE(zen3.native_bf16());
  EXPECT_EQ(candidate_kernels(zen3), (std::vector<std::string>{"Haswell", "Zen"}));
  const CpuInfo xeon = parse_cpu_info(
      "processor: 0\nvendor_id: GenuineIntel\nflags: avx avx2 fma avx512f avx512bw avx512dq "
      "avx512vl avx512cd amx_bf16\n");
  EXPECT_TRUE(xeon.native_bf16());  // AMX's bf16 counts for LibTorch's oneDNN
  EXPECT_EQ(candidate_kernels(xeon), (std::vector<std::string>{"Haswell", "SkylakeX"}));
  EXPECT_EQ(candidate_kernels(parse_cpu_info("processor: 0\nflags: sse2 avx\n")),
            (std::vector<std::string>{"Sandybridge"}));
  EXPECT_TRUE(candidate_kernels(parse_cpu_info("processor: 0\nflags: sse2\n")).empty());
}

TEST(BlasKernels, AUserSettingIsLeftAlone) {
  EnvGuard coretype("OPENBLAS_CORETYPE");
  EnvGuard choice("SLIMTRAIN_OPENBLAS_CHOICE");
  // No cache directory: nothing is measured (a probe child of this test binary would run the
  // tests, not the probe).
  EnvGuard cache("SLIMTRAIN_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  unsetenv("SLIMTRAIN_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  unsetenv("SLIMTRAIN_OPENBLAS_CHOICE");
  setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  char name[] = "unit_runtime";
  char* argv[] = {name, nullptr};
  reexec_for_openblas_kernels(argv);  // must return: nothing re-executed
  EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Haswell");
  if (detect_blas().kind == BlasInfo::Kind::openblas) {
    EXPECT_NE(openblas_kernels_note().find("set by you"), std::string::npos);
  }
}

TEST(Blas, TheReferenceWarningSaysWhatToInstall) {
  const std::string w = BlasInfo::reference_warning();
  EXPECT_NE(w.find("libopenblas0"), std::string::npos);
  EXPECT_NE(w.find("INSTALL.md"), std::string::npos);
  BlasInfo none;
  EXPECT_NE(none.describe().find("no BLAS"), std::string::npos);
}

}  // namespace
}  // namespace slimtrain::runtime
