// Which BLAS LibTorch calls, and the OpenBLAS kernel fix (slimtrain/runtime/blas.hpp).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "slimtrain/runtime/blas.hpp"

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

TEST(Blas, PrescottKernelsOnANewerCpuGetTheRightCoreType) {
  EnvGuard guard("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_CORETYPE");
  BlasInfo blas;
  blas.kind = BlasInfo::Kind::openblas;
  blas.library = "/usr/lib/libopenblas.so.0";
  blas.detail = "OpenBLAS 0.3.21 DYNAMIC_ARCH Prescott, kernels for Prescott (OpenMP)";
  blas.kernels = "Prescott";
  __builtin_cpu_init();
  const std::string expected = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                               : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                                 : "";
  EXPECT_EQ(better_openblas_coretype(blas), expected);
  // A user's own choice stands.
  setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_EQ(better_openblas_coretype(blas), "");
  unsetenv("OPENBLAS_CORETYPE");
  // Kernels OpenBLAS chose for this CPU, and other BLAS libraries, are left alone.
  blas.detail = "OpenBLAS 0.3.21 DYNAMIC_ARCH Prescott, kernels for SkylakeX (OpenMP)";
  blas.kernels = "SkylakeX";
  EXPECT_EQ(better_openblas_coretype(blas), "");
  blas.kind = BlasInfo::Kind::reference;
  blas.detail = "kernels for Prescott";
  blas.kernels = "Prescott";
  EXPECT_EQ(better_openblas_coretype(blas), "");
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
