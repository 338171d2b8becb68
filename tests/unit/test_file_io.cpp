#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "slimtrain/core/file_io.hpp"

using namespace slimtrain;

namespace {
bool present(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
void touch(const std::string& path) {
  std::ofstream(path) << "x";
}
std::string temp_dir() {
  char name[] = "/tmp/slimtrain-remove-tree-XXXXXX";
  return ::mkdtemp(name);
}
}  // namespace

TEST(RemoveTree, RemovesNestedDirectoriesAndNeverFollowsLinks) {
  const std::string root = temp_dir();
  const std::string tree = root + "/tree";
  const std::string outside = root + "/outside";
  ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
  touch(outside + "/kept");
  files::make_directories(tree + "/a/b/c");
  touch(tree + "/top");
  touch(tree + "/a/b/c/deep");
  ASSERT_EQ(::symlink(outside.c_str(), (tree + "/a/link-to-outside").c_str()), 0);
  ASSERT_EQ(::symlink("/nonexistent", (tree + "/dangling").c_str()), 0);

  EXPECT_TRUE(files::remove_tree(tree));
  EXPECT_FALSE(present(tree));
  EXPECT_TRUE(present(outside + "/kept")) << "a link inside the tree was followed";
  EXPECT_TRUE(files::remove_tree(root));
  EXPECT_FALSE(present(root));
}

TEST(RemoveTree, AFileALinkAndNothing) {
  const std::string root = temp_dir();
  touch(root + "/file");
  EXPECT_TRUE(files::remove_tree(root + "/file"));
  EXPECT_FALSE(present(root + "/file"));
  ASSERT_EQ(::symlink(root.c_str(), (root + "/self").c_str()), 0);
  EXPECT_TRUE(files::remove_tree(root + "/self"));  // the link, not what it names
  EXPECT_FALSE(present(root + "/self"));
  EXPECT_TRUE(present(root));
  EXPECT_TRUE(files::remove_tree(root + "/never-was"));
  EXPECT_TRUE(files::remove_tree(root));
}
