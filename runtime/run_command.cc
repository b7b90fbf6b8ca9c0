#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <future>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "js/isolate_pool.h"
#include "js/view_functions_js.h"
#include "runtime/commands_js.h"
#include "settee/store.h"

namespace settee {

namespace {

struct JsCommandArgs {
  int threads = 1;
  bool keep = false;
  std::string backend;  // "" = not given: memory, or leveldb when --data is
  std::string data;     // "" = not given (leveldb: ./settee_data)
  size_t max_heap_mb = 0;
  uint32_t timeout_ms = 0;
  std::string v8_flags;
  bool jitless = false;
  std::string script;                   // script path, "-" or the expression
  std::vector<std::string> positional;  // script/expression, then script args
};

// The words after the script (or expression), taken off the command line
// by TakeScriptArguments before CLI11 parses it.
std::vector<std::string>& ScriptArguments() {
  static std::vector<std::string> words;
  return words;
}

void AddCommonOptions(CLI::App* cmd, JsCommandArgs* a) {
  cmd->add_option("-t,--threads", a->threads, "Isolate threads, each running the script")
      ->check(CLI::Range(1, js::IsolatePool::kMaxThreads));
  cmd->add_flag("--keep", a->keep, "Restart a thread's script after an uncaught error");
  cmd->add_option("--backend", a->backend, "Storage backend (default memory, leveldb with --data)")
      ->check(CLI::IsMember({"memory", "leveldb"}));
  cmd->add_option("--data", a->data, "Data directory of the leveldb backend (default ./settee_data)");
  cmd->add_option("--max-heap-mb", a->max_heap_mb, "Heap limit per isolate in MiB (0: V8 default)");
  cmd->add_option("--timeout-ms", a->timeout_ms, "Wall-clock limit per call into JS (0: none)");
  cmd->add_option("--v8-flags", a->v8_flags, "Extra V8 flags, e.g. \"--max-semi-space-size=32\"");
  cmd->add_flag("--jitless", a->jitless, "Run V8 without JIT compilers (interpreter only, as on iOS)");
}

std::string ExecPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("settee");
}

std::string AbsolutePath(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  if (!p.empty() && p[0] == '/') return p;
  const char* cwd = getcwd(buf, sizeof buf);
  return std::string(cwd ? cwd : ".") + "/" + p;
}

Result<std::unique_ptr<Store>> OpenStore(const JsCommandArgs& a) {
  StoreOptions opts;
  // A data directory asks for a store that outlives the run: taking memory
  // instead would lose what the script wrote without a word.
  if (a.backend == "memory" && !a.data.empty()) {
    return Status::BadRequest("--data is the leveldb backend's directory; not with --backend memory");
  }
  if (a.backend == "leveldb" || !a.data.empty()) {
    opts.backend = StoreOptions::Backend::kLevelDB;
    opts.path = a.data.empty() ? "settee_data" : a.data;
  } else {
    opts.backend = StoreOptions::Backend::kMemory;
  }
  return Store::Open(opts);
}

js::PoolOptions PoolOptionsFor(const JsCommandArgs& a, Store* store) {
  js::PoolOptions p;
  p.threads = a.threads;
  p.store = store;
  p.keep = a.keep;
  p.limits.max_heap_mb = a.max_heap_mb;
  p.limits.timeout_ms = a.timeout_ms;
  // Without JIT there is no WebAssembly; saying so keeps V8 from warning.
  p.v8_flags = a.jitless ? "--jitless --no-expose-wasm " + a.v8_flags : a.v8_flags;
  // Messages for the host thread are shown, one line each.
  p.on_message = [](int from, const std::string& json) {
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    std::fprintf(stdout, "[message from thread %d] %s\n", from, json.c_str());
    std::fflush(stdout);
  };
  return p;
}

// node ignores SIGPIPE: a write to a pipe whose reader has gone fails with
// EPIPE, which console.log ignores and process.stdout reports as an 'error'
// event, instead of killing the process (`settee run x.js | head`).
void IgnoreSigpipe() { ::signal(SIGPIPE, SIG_IGN); }

int Run(const JsCommandArgs& a) {
  IgnoreSigpipe();
  if (a.positional.empty()) {
    std::fprintf(stderr, "settee run: a script (or - for stdin) is required\n");
    return 2;
  }
  std::string script = a.positional[0];
  std::string source;
  std::string filename;
  if (script == "-") {
    source.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (source.empty()) source = "\n";
    filename = "[stdin]";
  } else {
    filename = AbsolutePath(script);
    if (access(filename.c_str(), R_OK) != 0) {
      std::fprintf(stderr, "settee run: cannot read %s\n", script.c_str());
      return 2;
    }
  }
  auto store = OpenStore(a);
  if (!store.ok()) {
    std::fprintf(stderr, "settee run: cannot open the store: %s\n", store.status().ToString().c_str());
    return 2;
  }
  js::PoolOptions p = PoolOptionsFor(a, store->get());
  js::InstallPoolValidateFunctions(store->get(), p.limits);
  p.argv.push_back(ExecPath());
  p.argv.push_back(filename);
  p.argv.insert(p.argv.end(), a.positional.begin() + 1, a.positional.end());
  auto pool = js::IsolatePool::Start(p);
  if (!pool.ok()) {
    std::fprintf(stderr, "settee run: %s\n", pool.status().ToString().c_str());
    return 2;
  }
  (*pool)->RunMain(js::IsolatePool::kAllThreads, filename, source);
  (*pool)->Wait();
  (*pool)->Shutdown();
  std::fflush(stdout);
  // Read after Shutdown: the 'exit' listeners, run as the threads end, may
  // set process.exitCode or call process.exit(), as in node.
  return (*pool)->Wait();
}

int Eval(const JsCommandArgs& a) {
  if (a.positional.empty()) {
    std::fprintf(stderr, "settee eval: an expression is required\n");
    return 2;
  }
  IgnoreSigpipe();
  auto store = OpenStore(a);
  if (!store.ok()) {
    std::fprintf(stderr, "settee eval: cannot open the store: %s\n", store.status().ToString().c_str());
    return 2;
  }
  js::PoolOptions p = PoolOptionsFor(a, store->get());
  js::InstallPoolValidateFunctions(store->get(), p.limits);
  p.threads = 1;
  p.argv.push_back(ExecPath());
  p.argv.insert(p.argv.end(), a.positional.begin() + 1, a.positional.end());
  auto pool = js::IsolatePool::Start(p);
  if (!pool.ok()) {
    std::fprintf(stderr, "settee eval: %s\n", pool.status().ToString().c_str());
    return 2;
  }
  std::promise<int> printed;
  (*pool)->Eval(0, a.positional[0], [&printed](Result<std::string> r) {
    if (r.ok()) {
      std::string line = *r + "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
      printed.set_value(0);
    } else {
      std::string line = r.status().reason() + "\n";
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fflush(stderr);
      printed.set_value(1);
    }
  });
  int code = printed.get_future().get();
  (*pool)->Wait();
  (*pool)->Shutdown();
  return code != 0 ? code : (*pool)->Wait();  // after the 'exit' listeners, as Run's
}

}  // namespace

bool OpenClosedStandardStreams() {
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat st;
    if (fstat(fd, &st) == 0) continue;
    // open() takes the lowest free number: this one.
    if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd) return false;
  }
  return true;
}

void RegisterRunCommands(CLI::App& app) {
  auto run_args = std::make_shared<JsCommandArgs>();
  CLI::App* run = app.add_subcommand("run", "Run a JavaScript file in N isolate threads");
  AddCommonOptions(run, run_args.get());
  run->add_option("script", run_args->script, "script.js (or - for stdin), then its arguments")
      ->required();
  run->callback([run_args] {
    run_args->positional = {run_args->script};
    for (auto& word : ScriptArguments()) run_args->positional.push_back(word);
    int code = Run(*run_args);
    if (code != 0) throw CLI::RuntimeError(code);
  });

  auto eval_args = std::make_shared<JsCommandArgs>();
  CLI::App* eval = app.add_subcommand("eval", "Evaluate a JavaScript expression and print its value");
  AddCommonOptions(eval, eval_args.get());
  eval->add_option("expression", eval_args->script, "The expression, then its arguments")->required();
  eval->callback([eval_args] {
    eval_args->positional = {eval_args->script};
    for (auto& word : ScriptArguments()) eval_args->positional.push_back(word);
    int code = Eval(*eval_args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int TakeScriptArguments(const CLI::App& app, int argc, char** argv) {
  const CLI::App* command = nullptr;  // run or eval, once met
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.size() > 1 && word[0] == '-') {
      if (word == "--") return argc;
      // An option of the app or of the command: skip its value, unless it
      // is in the word (--threads=2, -t2). One CLI11 does not know is left
      // to CLI11 to refuse.
      const bool is_long = word[1] == '-';
      const size_t eq = word.find('=');
      const std::string name = is_long ? word.substr(0, eq) : word.substr(0, 2);
      const CLI::Option* opt = (command ? command : &app)->get_option_no_throw(name);
      if (opt == nullptr) return argc;
      const bool value_in_word = is_long ? eq != std::string::npos : word.size() > 2;
      if (opt->get_items_expected_max() > 0 && !value_in_word) ++i;
      continue;
    }
    if (command == nullptr) {
      auto found = app.get_subcommands([&word](const CLI::App* sub) { return sub->get_name() == word; });
      if (found.empty() || (word != "run" && word != "eval")) return argc;
      command = found[0];
      continue;
    }
    // The script (or expression): CLI11 parses up to it, the rest is the script's.
    ScriptArguments().assign(argv + i + 1, argv + argc);
    return i + 1;
  }
  return argc;
}

}  // namespace settee
