#include "apps/gcnlab/options.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gcnlab::cli {

namespace {

// Words of a command line recorded by the results (single quotes around words with spaces or quotes).
std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, any = false;
  for (const char c : line) {
    if (c == '\'') {
      quoted = !quoted, any = true;
    } else if (c == ' ' && !quoted) {
      if (any) words.push_back(word);
      word.clear(), any = false;
    } else {
      word += c, any = true;
    }
  }
  if (any) words.push_back(word);
  return words;
}

std::string option_name(const std::string& word) { return word.substr(0, word.find('=')); }

}  // namespace

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    items.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

std::vector<std::string> with_config(const CommandSpec& spec, std::vector<std::string> args) {
  std::optional<std::string> path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) path = args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) path = args[i].substr(9);
  }
  if (!path) return args;
  std::ifstream in(*path);
  if (!in) throw UsageError(fmt::format("--config: cannot open '{}'", *path));
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("--config: '{}' is not valid JSON ({})", *path, e.what()));
  }
  const auto line = run.value("/provenance/command_line"_json_pointer, std::string());
  if (line.empty())
    throw UsageError(fmt::format("--config: '{}' records no command line (provenance.command_line: results of "
                                 "gcnlab train from before its provenance was recorded)", *path));
  const std::vector<std::string> words = split_words(line);
  const auto at = std::find(words.begin(), words.end(), spec.name);
  if (at == words.end()) throw UsageError(fmt::format("--config: '{}' is not a gcnlab {} run", *path, spec.name));
  std::set<std::string> given{"--config", "--out", "--weights-out", "--checkpoint", "--checkpoint-every", "--resume"};
  for (const std::string& w : args)
    if (w.rfind("--", 0) == 0) given.insert(option_name(w));
  std::vector<std::string> merged;
  for (auto it = at + 1; it != words.end(); ++it) {
    const std::string name = option_name(*it);
    const auto o = std::find_if(spec.options.begin(), spec.options.end(), [&](const OptionSpec& s) { return s.name == name; });
    const bool takes_value = o != spec.options.end() && !o->value.empty() && it->find('=') == std::string::npos;
    const bool keep = it->rfind("--", 0) != 0 || !given.count(name);
    if (keep) merged.push_back(*it);
    if (takes_value && it + 1 != words.end()) {
      ++it;
      if (keep) merged.push_back(*it);
    }
  }
  merged.insert(merged.end(), args.begin(), args.end());
  return merged;
}

Args::Args(const CommandSpec& spec, std::vector<std::string> args) : spec_(&spec) {
  CLI::App app(spec.description, "gcnlab " + spec.name);
  app.footer(spec.footer);
  app.get_formatter()->column_width(30);
  std::map<std::string, std::string> given;
  std::map<std::string, bool> flags;
  for (const OptionSpec& o : spec.options) {
    if (o.value.empty()) {
      app.add_flag(o.name, flags[o.name], o.help);
      continue;
    }
    CLI::Option* opt = app.add_option(o.name, given[o.name], o.help)->type_name(o.value);
    if (!o.choices.empty()) opt->check(CLI::IsMember(o.choices));
  }
  if (!spec.positional.empty()) app.add_option(spec.positional, positional_, "")->type_name("");
  std::reverse(args.begin(), args.end());  // CLI11 consumes the vector from its back
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    throw HelpRequested{app.help()};
  } catch (const CLI::ExtrasError& e) {
    // "The following arguments were not expected: ... --bogus": name the last one
    const std::string what = e.what();
    throw UsageError(fmt::format("unknown or misplaced argument '{}' (see gcnlab {} --help)",
                                 what.substr(what.rfind(' ') + 1), spec.name));
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see gcnlab {} --help)", e.what(), spec.name));
  }
  for (const OptionSpec& o : spec.options) {
    if (o.value.empty()) {
      if (flags[o.name]) flags_.insert(o.name);
    } else if (app.get_option(o.name)->count() > 0) {
      values_[o.name] = given[o.name];
    }
  }
}

const OptionSpec& Args::declared(const std::string& name) const {
  const auto it = std::find_if(spec_->options.begin(), spec_->options.end(),
                               [&](const OptionSpec& o) { return o.name == name; });
  GCNLAB_ASSERT(it != spec_->options.end());  // every option a command reads is in its table
  return *it;
}

std::optional<std::string> Args::value(const std::string& name) {
  GCNLAB_ASSERT(!declared(name).value.empty());
  read_.insert(name);
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min) {
  const auto v = value(name);
  if (!v) return fallback;
  long long x = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  if (ec != std::errc() || p != v->data() + v->size()) throw UsageError(fmt::format("{} '{}' is not an integer", name, *v));
  if (x < min) throw UsageError(fmt::format("{} must be >= {} (got {})", name, min, x));
  return x;
}

double Args::real(const std::string& name, double fallback) {
  const auto v = value(name);
  if (!v) return fallback;
  try {
    std::size_t used = 0;
    const double x = std::stod(*v, &used);
    if (used == v->size()) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{} '{}' is not a number", name, *v));
}

bool Args::flag(const std::string& name) {
  GCNLAB_ASSERT(declared(name).value.empty());
  read_.insert(name);
  return flags_.count(name) > 0;
}

std::vector<std::string> Args::positional() {
  read_.insert(spec_->positional);
  return positional_;
}

void Args::finish() const {
  std::vector<std::string> given(flags_.begin(), flags_.end());
  for (const auto& [name, v] : values_) given.push_back(name);
  for (const std::string& name : given)
    if (!read_.count(name)) throw UsageError(fmt::format("{} does not apply here (see gcnlab {} --help)", name, spec_->name));
  if (!positional_.empty() && !read_.count(spec_->positional))
    throw UsageError(fmt::format("unknown or misplaced argument '{}' (see gcnlab {} --help)", positional_.front(),
                                 spec_->name));
}

}  // namespace gcnlab::cli
