// ChatTemplate renders the chat templates of Qwen2-VL-7B-Instruct, Qwen2.5-VL-7B-Instruct,
// Qwen2-7B-Instruct and Qwen2.5-7B-Instruct, and slimtrain's own template of every construct in
// the subset, byte for byte as transformers renders them with jinja2:
// fixtures/chat_templates/expected.json holds transformers' renderings of each message list
// (fixtures/make_chat_templates.py writes it; fixtures/chat_templates/README.md names where each
// template came from). find_chat_template finds each where transformers would. Anything outside
// the subset is a ConfigError naming the template, the line and the construct.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/tokenize/chat_template.hpp"

namespace slimtrain::tokenize {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFixtures =
    std::string(SLIMTRAIN_TEST_SOURCE_DIR) + "/tests/unit/fixtures/chat_templates";

const json& expected() {
  static const json j = [] {
    std::ifstream in(kFixtures + "/expected.json");
    return json::parse(in);
  }();
  return j;
}

std::vector<ChatMessage> messages_of(const json& list) {
  std::vector<ChatMessage> messages;
  for (const json& m : list) {
    ChatMessage message;
    message.role = m["role"].get<std::string>();
    if (m["content"].is_string()) {
      message.content_string = m["content"].get<std::string>();
    } else {
      for (const json& part : m["content"])
        message.content.push_back(
            {part["type"].get<std::string>(), part.value("text", std::string())});
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

// Renders every case of one fixture directory and compares it with transformers' text.
void renders_as_transformers(const std::string& directory) {
  const json* entry = nullptr;
  for (const json& t : expected()["templates"])
    if (t["directory"] == directory) entry = &t;
  ASSERT_NE(entry, nullptr) << directory << " is not in expected.json";
  std::string file;
  const std::string source = find_chat_template(kFixtures + "/" + directory, &file);
  ASSERT_FALSE(source.empty()) << directory;
  EXPECT_EQ(fs::path(file).filename().string(), (*entry)["file"].get<std::string>());
  const ChatTemplate chat = ChatTemplate::parse(source, file);
  for (const json& c : (*entry)["cases"]) {
    EXPECT_EQ(chat.render(messages_of(c["messages"]), c["add_generation_prompt"].get<bool>()),
              c["expected"].get<std::string>())
        << directory << ", case " << c["name"].get<std::string>();
  }
  EXPECT_GE((*entry)["cases"].size(), 6u);
}

TEST(ChatTemplate, Qwen2VL7BInstructFromTokenizerConfig) {
  renders_as_transformers("qwen2-vl-7b-instruct");
}

TEST(ChatTemplate, Qwen25VL7BInstructFromChatTemplateJson) {
  renders_as_transformers("qwen2.5-vl-7b-instruct");
}

TEST(ChatTemplate, Qwen27BInstruct) {
  renders_as_transformers("qwen2-7b-instruct");
}

TEST(ChatTemplate, Qwen257BInstructWithItsToolBranches) {
  renders_as_transformers("qwen2.5-7b-instruct");
}

TEST(ChatTemplate, EveryConstructOfTheSubsetFromChatTemplateJinja) {
  renders_as_transformers("subset");
}

TEST(ChatTemplate, DefaultOfANamedList) {
  renders_as_transformers("named");
}

TEST(ChatTemplate, LexerEdgesAsJinja) {
  ASSERT_GE(expected()["inline"].size(), 10u);
  for (const json& c : expected()["inline"]) {
    const std::string name = c["name"].get<std::string>();
    EXPECT_EQ(ChatTemplate::parse(c["template"].get<std::string>(), name).render({}, false),
              c["expected"].get<std::string>())
        << name;
  }
}

TEST(ChatTemplate, FindsTheTemplateBesideATokenizerJson) {
  std::string file;
  const std::string beside =
      find_chat_template(kFixtures + "/qwen2.5-vl-7b-instruct/tokenizer.json", &file);
  EXPECT_EQ(beside, find_chat_template(kFixtures + "/qwen2.5-vl-7b-instruct"));
  EXPECT_EQ(fs::path(file).filename().string(), "chat_template.json");
  EXPECT_EQ(find_chat_template(kFixtures, &file), "");  // no template files there
  EXPECT_EQ(file, "");
}

// A scratch checkpoint directory, removed at the end of the test.
struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() /
          ("slimtrain_chat_template_" +
           std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
  }
};

TEST(ChatTemplate, FindsInTransformersOrder) {
  Scratch s;
  s.write("tokenizer_config.json", R"({"chat_template": "config"})");
  EXPECT_EQ(find_chat_template(s.dir.string()), "config");
  s.write("chat_template.jinja", "jinja");
  EXPECT_EQ(find_chat_template(s.dir.string()), "jinja");
  s.write("chat_template.json", R"({"chat_template": "legacy json"})");
  EXPECT_EQ(find_chat_template(s.dir.string()), "legacy json");
  s.write("processor_config.json", R"({"chat_template": "processor"})");
  std::string file;
  EXPECT_EQ(find_chat_template(s.dir.string(), &file), "processor");
  EXPECT_EQ(fs::path(file).filename().string(), "processor_config.json");
}

// The message of the ConfigError `f` throws; "" (and a failure) when it throws none.
template <typename F>
std::string config_error(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

TEST(ChatTemplate, NamedListWithoutDefaultAndBadJson) {
  Scratch s;
  s.write(
      "tokenizer_config.json",
      R"({"chat_template": [{"name": "tool_use", "template": "t"}, {"name": "rag", "template": "r"}]})");
  std::string message = config_error([&] { find_chat_template(s.dir.string()); });
  EXPECT_NE(message.find("names tool_use, rag but no \"default\""), std::string::npos) << message;
  s.write("chat_template.json", "{not json");
  message = config_error([&] { find_chat_template(s.dir.string()); });
  EXPECT_NE(message.find("chat_template.json is not JSON"), std::string::npos) << message;
}

std::string parse_error(const std::string& source) {
  return config_error([&] { ChatTemplate::parse(source, "t.jinja"); });
}

std::string render_error(const std::string& source) {
  const ChatTemplate chat = ChatTemplate::parse(source, "t.jinja");
  ChatMessage user{"user", {{"text", "hi"}}, std::nullopt};
  return config_error([&] { chat.render({user}, true); });
}

void expect_has(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos)
      << "\"" << message << "\" lacks \"" << part << "\"";
}

TEST(ChatTemplate, UnsupportedTagNamesFileLineAndTag) {
  const std::string m = parse_error("ok\n{% macro f() %}x{% endmacro %}");
  expect_has(m, "t.jinja, line 2: the tag {% macro %} is outside the Jinja subset");
  expect_has(parse_error("{% frobnicate %}"), "line 1: unknown tag {% frobnicate %}");
  expect_has(parse_error("{% endif %}"), "{% endif %} without the tag it closes");
  expect_has(parse_error("{% raw %}x{% endraw %}"), "{% raw %} is outside");
}

TEST(ChatTemplate, UnknownFilterAndTest) {
  expect_has(parse_error("a\n\n{{ messages[0].role|upper }}"),
             "t.jinja, line 3: the filter 'upper' is outside the Jinja subset");
  expect_has(parse_error("{{ 'x'|trim('x') }}"), "arguments to the filter 'trim'");
  expect_has(parse_error("{% if 3 is odd %}{% endif %}"), "the test 'odd' is outside");
  expect_has(parse_error("{% if 3 is divisibleby 3 %}{% endif %}"), "the test 'divisibleby'");
}

TEST(ChatTemplate, UnterminatedBlocksTagsCommentsAndStrings) {
  expect_has(parse_error("x\n{% for m in messages %}\n{{ m.role }}"),
             "t.jinja, line 2: {% for %} is never closed (no {% endfor %})");
  expect_has(parse_error("{% if true %}{% elif false %}"), "{% if %} is never closed");
  expect_has(parse_error("{{ messages"), "line 1: a {{ expression that never ends");
  expect_has(parse_error("{% if x"), "a {% tag that never ends");
  expect_has(parse_error("\n{# note"), "line 2: a {# comment #} that never ends");
  expect_has(parse_error("{{ 'abc }}"), "a string literal that never ends");
  expect_has(parse_error("{{ (1 }}"), "an unbalanced '}'");
  expect_has(parse_error("{{ (1 ] }}"), "an unbalanced ']'");
}

TEST(ChatTemplate, ExpressionsOutsideTheSubset) {
  expect_has(parse_error("{{ 'a' if true else 'b' }}"), "an inline if");
  expect_has(parse_error("{{ messages[0].content.strip() }}"), "a method call");
  expect_has(parse_error("{{ strftime_now('%Y') }}"), "the function 'strftime_now'");
  expect_has(parse_error("{{ [1, 2] }}"), "a list literal");
  expect_has(parse_error("{{ messages[1:] }}"), "a slice");
  expect_has(parse_error("{{ 2 * 3 }}"), "the operator '*'");
  expect_has(parse_error("{{ 1 < 2 < 3 }}"), "a chained comparison");
  expect_has(parse_error("{{ 1.5 }}"), "a float literal");
  expect_has(parse_error("{% for a, b in x %}{% endfor %}"), "unpacking");
  expect_has(parse_error("{% for m in messages %}{% else %}{% endfor %}"), "{% else %}");
  expect_has(parse_error("{% set x %}y{% endset %}"), "a {% set %} block");
  expect_has(parse_error("{{ x ? }}"), "unexpected character '?'");
}

TEST(ChatTemplate, RenderErrorsNameTheLine) {
  expect_has(render_error("\n{% if messages|length > 0 %}{{ raise_exception('no ' ~ 'thanks') }}"
                          "{% endif %}"),
             "t.jinja, line 2: the chat template raised an exception: no thanks");
  expect_has(render_error("{{ messages[0].role + 1 }}"), "line 1: '+' of a str and a int");
  expect_has(render_error("{{ nothing.role }}"), "'nothing' is undefined");
  expect_has(render_error("{% set x = 1 %}{% set x.y = 2 %}"), "on a int, not a namespace");
  expect_has(render_error("{{ messages[0].items }}"), "the dict method 'items'");
  expect_has(render_error("{{ loop.cycle }}"), "'loop' is undefined");
  expect_has(render_error("{{ messages }}"), "printing a list");
}

TEST(ChatTemplate, SpecialTokensAreGivenOrRefused) {
  const ChatTemplate chat = ChatTemplate::parse("{{ bos_token }}{{ messages[0].role }}", "t");
  EXPECT_EQ(chat.render({{"user", {}, "hi"}}, false, {{"bos_token", "<s>"}}), "<s>user");
  expect_has(config_error([&] {
               chat.render({{"user", {}, "hi"}}, false);
             }),
             "the template reads 'bos_token', a special token slimtrain was not given");
  EXPECT_EQ(ChatTemplate::parse("{{ eos_token is defined }}", "t").render({}, false), "False");
}

TEST(ChatTemplate, MovesAndRendersAgain) {
  ChatTemplate a = ChatTemplate::parse("{{ messages|length }}", "a");
  ChatTemplate b = std::move(a);
  EXPECT_EQ(b.render({{"user", {}, "x"}, {"user", {}, "y"}}, false), "2");
  EXPECT_EQ(b.render({}, true), "0");
}

}  // namespace
}  // namespace slimtrain::tokenize
