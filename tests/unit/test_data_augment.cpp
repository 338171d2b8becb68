// Augmentation: each transform does what it says, draws depend on (seed, epoch, row) only, and
// feature vectors are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/augment.hpp"

namespace sd = slimtrain::data;

namespace {

constexpr int kH = 6, kW = 7;

std::vector<std::uint8_t> ramp() {
  std::vector<std::uint8_t> v(kH * kW);
  for (int i = 0; i < kH * kW; ++i) v[i] = static_cast<std::uint8_t>(1 + i);  // no zeros
  return v;
}

std::vector<std::uint8_t> augmented(const sd::AugmentOptions& o, std::int64_t row,
                                    std::int64_t epoch, std::uint64_t seed = 7) {
  sd::Augmenter a(o, {kH, kW}, sd::ElementType::kUint8, seed);
  std::vector<std::uint8_t> v = ramp();
  a.apply(v.data(), row, epoch);
  return v;
}

// The (dx, dy) with out(y, x) = in(y + dy, x + dx), zero outside; none: {99, 99}.
std::pair<int, int> shift_of(const std::vector<std::uint8_t>& out, int pad) {
  const std::vector<std::uint8_t> in = ramp();
  for (int dy = -pad; dy <= pad; ++dy)
    for (int dx = -pad; dx <= pad; ++dx) {
      bool same = true;
      for (int y = 0; y < kH && same; ++y)
        for (int x = 0; x < kW && same; ++x) {
          const int sy = y + dy, sx = x + dx;
          const int want = sy < 0 || sy >= kH || sx < 0 || sx >= kW ? 0 : in[sy * kW + sx];
          same = out[y * kW + x] == want;
        }
      if (same) return {dx, dy};
    }
  return {99, 99};
}

}  // namespace

TEST(Augment, CropWithPaddingIsAShiftWithinThePaddingWithZeros) {
  sd::AugmentOptions o;
  o.crop_padding = 2;
  std::set<std::pair<int, int>> seen;
  for (std::int64_t row = 0; row < 200; ++row) {
    const auto s = shift_of(augmented(o, row, 0), 2);
    ASSERT_NE(s.first, 99) << "row " << row << " is not a shift of at most 2 pixels";
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 25u) << "every shift in [-2, 2]^2 occurs over 200 rows";
}

TEST(Augment, FlipMirrorsAboutHalfTheSamples) {
  sd::AugmentOptions o;
  o.flip = true;
  std::vector<std::uint8_t> mirrored = ramp();
  for (int y = 0; y < kH; ++y)
    std::reverse(mirrored.begin() + y * kW, mirrored.begin() + y * kW + kW);
  int flipped = 0;
  for (std::int64_t row = 0; row < 400; ++row) {
    const std::vector<std::uint8_t> v = augmented(o, row, 3);
    ASSERT_TRUE(v == ramp() || v == mirrored) << "row " << row;
    flipped += v == mirrored;
  }
  EXPECT_GT(flipped, 150);
  EXPECT_LT(flipped, 250);
}

TEST(Augment, RotationKeepsAConstantImageConstantInsideAndBlackensCorners) {
  sd::AugmentOptions o;
  o.rotate_deg = 30;
  sd::Augmenter a(o, {1, 9, 9}, sd::ElementType::kFloat32, 1);
  int corners_black = 0;
  for (std::int64_t row = 0; row < 50; ++row) {
    std::vector<float> v(81, 100.0f);
    a.apply(v.data(), row, 0);
    EXPECT_NEAR(v[4 * 9 + 4], 100.0f, 1e-4) << "the centre stays";
    for (float p : v) ASSERT_LE(p, 100.0f + 1e-4);
    corners_black += v[0] < 100.0f;
  }
  EXPECT_GT(corners_black, 40) << "a rotated square uncovers its corners";
}

TEST(Augment, ErasingBlacksOutOneRectangleInEveryChannelOfAboutPOfTheSamples) {
  sd::AugmentOptions o;
  o.erase_probability = 0.5;
  constexpr int kSide = 20, kPlane = kSide * kSide;
  sd::Augmenter a(o, {2, kSide, kSide}, sd::ElementType::kUint8, 3);
  int erased = 0;
  std::set<int> areas;
  for (std::int64_t row = 0; row < 400; ++row) {
    std::vector<std::uint8_t> v(2 * kPlane, 200);
    a.apply(v.data(), row, 1);
    int zeros = 0, top = kSide, bottom = -1, left = kSide, right = -1;
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x)
        if (v[y * kSide + x] == 0) {
          ++zeros;
          top = std::min(top, y), bottom = std::max(bottom, y);
          left = std::min(left, x), right = std::max(right, x);
        }
    ASSERT_TRUE(std::equal(v.begin(), v.begin() + kPlane, v.begin() + kPlane))
        << "row " << row << ": both channels lose the same rectangle";
    if (zeros == 0) continue;
    ++erased;
    const int h = bottom - top + 1, w = right - left + 1;
    ASSERT_EQ(zeros, h * w) << "row " << row << ": the black pixels form one rectangle";
    // 2-33 % of the area, up to rounding each side to whole pixels.
    EXPECT_GE(zeros, 4) << "row " << row;
    EXPECT_LE(zeros, 0.33 * kPlane * 1.25) << "row " << row;
    areas.insert(zeros);
  }
  EXPECT_GT(erased, 150);
  EXPECT_LT(erased, 250);
  EXPECT_GT(areas.size(), 20u) << "sizes vary";
}

TEST(Augment, DrawsDependOnSeedEpochAndRowOnly) {
  sd::AugmentOptions o;
  o.crop_padding = 3;
  o.flip = true;
  o.rotate_deg = 15;
  o.erase_probability = 0.5;
  EXPECT_EQ(augmented(o, 5, 2), augmented(o, 5, 2));
  int differ_epoch = 0, differ_seed = 0;
  for (std::int64_t row = 0; row < 20; ++row) {
    differ_epoch += augmented(o, row, 2) != augmented(o, row, 3);
    differ_seed += augmented(o, row, 2, 7) != augmented(o, row, 2, 8);
  }
  EXPECT_GE(differ_epoch, 18);
  EXPECT_GE(differ_seed, 18);
}

TEST(Augment, OffLeavesSamplesAloneAndFeaturesAreRefused) {
  EXPECT_EQ(augmented(sd::AugmentOptions{}, 1, 1), ramp());
  EXPECT_EQ(sd::AugmentOptions{}.describe(), "off");
  sd::AugmentOptions o;
  o.flip = true;
  EXPECT_THROW(sd::Augmenter(o, {12}, sd::ElementType::kFloat32, 0), slimtrain::ConfigError);
}
