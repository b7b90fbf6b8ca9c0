#include "runtime/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/auth.h"
#include "runtime/config_file.h"
#include "runtime/couch_server.h"
#include "runtime/http_server.h"
#include "runtime/log.h"
#include "settee/store.h"

namespace settee {

namespace {

std::vector<std::function<void(CouchServer&)>>& Extensions() {
  static std::vector<std::function<void(CouchServer&)>> extensions;
  return extensions;
}

struct ServeConfig {
  int port = 5984;
  std::string bind = "127.0.0.1";
  std::string data;
  std::string backend = "leveldb";
  int threads = 0;  // 0 = hardware concurrency
  std::vector<std::string> admins;
  std::string cors_origins;
  std::string log_level = "info";
  bool sync = false;
  size_t max_document_size = 8u << 20;
  uint64_t max_request_size = 64u << 20;
  uint64_t max_attachment_size = 1u << 30;
  int view_threads = 0;
  int view_timeout_ms = 5000;
};

bool IsLoopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "::1" || addr == "localhost";
}

}  // namespace

std::string DefaultDataDir() {
  if (const char* d = std::getenv("SETTEE_DATA")) return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + "/settee";
  }
  return "./settee-data";
}

namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Writes admins and the log level changed over HTTP back into the --config
// file (runtime/config_file.h), as CouchDB writes local.ini. Its [serve]
// `admin` list holds "name:hash" entries (`value` is what _config shows:
// the password's hash); the other sections have no option of `settee
// serve` to persist to.
Status PersistToConfigFile(const std::string& path, const std::string& section,
                           const std::string& key, const std::string* value) {
  if (section == "admins") {
    return EditConfigOption(path, "serve", "admin", true, [&](std::vector<std::string>* v) {
      std::erase_if(*v, [&](const std::string& e) { return e.rfind(key + ":", 0) == 0; });
      if (value != nullptr) v->push_back(key + ":" + *value);
    });
  }
  if (section == "log" && key == "level") {
    return EditConfigOption(path, "serve", "log-level", false, [&](std::vector<std::string>* v) {
      v->clear();
      // The settee name (CouchDB's "notice" is "info"): --log-level reads
      // only those at the next start.
      LogLevel level;
      if (value != nullptr && ParseCouchLogLevel(*value, &level)) v->push_back(LogLevelName(level));
    });
  }
  return Status::OK();
}

// The --config file's admins with a password in clear get its hash
// instead, written back before the server starts, as CouchDB hashes the
// [admins] of local.ini when it starts: the file no longer tells anyone
// who reads it the password. *before and *after: the file's admin list
// (nothing is written when no entry changes).
Status HashConfigFileAdmins(const std::string& path, std::vector<std::string>* before,
                            std::vector<std::string>* after) {
  return EditConfigOption(path, "serve", "admin", true, [&](std::vector<std::string>* v) {
    *before = *v;
    for (std::string& entry : *v) {
      const size_t colon = entry.find(':');
      if (colon == std::string::npos || colon == 0) continue;  // refused below, as given
      const std::string_view password = std::string_view(entry).substr(colon + 1);
      if (Authenticator::IsPasswordHash(password)) continue;
      auto hash = Authenticator::HashPassword(password);
      if (hash.ok()) entry = entry.substr(0, colon + 1) + *hash;
    }
    *after = *v;
  });
}

int RunServe(ServeConfig cfg, const std::string& config_file) {
  LogLevel level;
  if (!ParseLogLevel(cfg.log_level, &level)) {
    std::fprintf(stderr, "settee: unknown --log-level %s\n", cfg.log_level.c_str());
    return 2;
  }
  SetLogLevel(level);

  if (!config_file.empty()) {
    std::vector<std::string> before, after;
    Status hashed = HashConfigFileAdmins(config_file, &before, &after);
    if (!hashed.ok()) {
      LogWarning("the admin passwords in %s stay in clear: %s", config_file.c_str(),
                 hashed.ToString().c_str());
    } else if (cfg.admins == before) {
      cfg.admins = after;  // the admins came from the file: the server shows its hashes
    }
  }

  CouchServerOptions server_opts;
  std::vector<std::string> admin_specs = cfg.admins;
  if (const char* env = std::getenv("SETTEE_ADMINS")) {
    // A hash holds two commas of its own ("name:-pbkdf2-key,salt,iterations"):
    // the pieces after an unfinished one are its own.
    auto unfinished_hash = [](const std::string& spec) {
      const size_t colon = spec.find(':');
      return colon != std::string::npos && Authenticator::IsPasswordHash(std::string_view(spec).substr(colon + 1)) &&
             std::count(spec.begin() + colon, spec.end(), ',') < 2;
    };
    std::vector<std::string> from_env;
    for (auto& a : SplitList(env)) {
      if (!from_env.empty() && unfinished_hash(from_env.back())) from_env.back() += "," + a;
      else from_env.push_back(a);
    }
    admin_specs.insert(admin_specs.end(), from_env.begin(), from_env.end());
  }
  for (const std::string& spec : admin_specs) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos || colon == 0) {
      std::fprintf(stderr, "settee: --admin expects user:password\n");
      return 2;
    }
    const std::string password = spec.substr(colon + 1);
    if (Authenticator::IsPasswordHash(password)) {
      Status s = Authenticator::CheckPasswordHash(password);
      if (!s.ok()) {
        std::fprintf(stderr, "settee: the password hash of admin %s: %s\n", spec.substr(0, colon).c_str(),
                     s.reason().c_str());
        return 2;
      }
    }
    server_opts.admins.emplace_back(spec.substr(0, colon), password);
  }
  if (server_opts.admins.empty() && !IsLoopback(cfg.bind)) {
    std::fprintf(stderr,
                 "settee: refusing to serve %s without a server admin (admin party is only "
                 "allowed on loopback); pass --admin user:password or set SETTEE_ADMINS\n",
                 cfg.bind.c_str());
    return 2;
  }
  if (const char* secret = std::getenv("SETTEE_COOKIE_SECRET")) server_opts.cookie_secret = secret;
  server_opts.cors_origins = SplitList(cfg.cors_origins);
  server_opts.view_threads = cfg.view_threads;
  server_opts.max_decoded_body_bytes = cfg.max_request_size;
  server_opts.keep_an_admin = !IsLoopback(cfg.bind);
  server_opts.view_timeout_ms = cfg.view_timeout_ms;

  StoreOptions store_opts;
  if (cfg.backend == "memory") {
    store_opts.backend = StoreOptions::Backend::kMemory;
  } else if (cfg.backend == "leveldb") {
    store_opts.backend = StoreOptions::Backend::kLevelDB;
    store_opts.path = cfg.data.empty() ? DefaultDataDir() : cfg.data;
  } else {
    std::fprintf(stderr, "settee: --backend must be leveldb or memory\n");
    return 2;
  }
  store_opts.sync = cfg.sync;
  store_opts.max_document_size = cfg.max_document_size;
  store_opts.max_attachment_size = cfg.max_attachment_size;
  auto store = Store::Open(store_opts);
  if (!store.ok()) {
    std::fprintf(stderr, "settee: cannot open store: %s\n", store.status().ToString().c_str());
    return 1;
  }

  // SIGINT/SIGTERM are taken synchronously by this thread (sigwait); every
  // thread started from here on inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  {
    CouchServer couch(store->get(), server_opts);
    // The listener's and the store's settings in CouchDB's terms
    // (/_node/_local/_config); fixed until a restart.
    NodeConfig& config = couch.config();
    config.Define("chttpd", "bind_address", cfg.bind);
    config.Define("chttpd", "max_http_request_size", std::to_string(cfg.max_request_size));
    config.Define("couchdb", "max_attachment_size", std::to_string(cfg.max_attachment_size));
    config.Define("couchdb", "database_dir", store_opts.path);
    config.Define("couchdb", "view_index_dir", store_opts.path);
    config.Define("settee", "backend", cfg.backend);
    config.Define("settee", "sync", cfg.sync ? "true" : "false");
    if (!config_file.empty()) {
      config.SetPersister([config_file](const std::string& section, const std::string& key,
                                        const std::string* value) {
        return PersistToConfigFile(config_file, section, key, value);
      }, [](const std::string& section, const std::string& key, const std::string* value) {
        // Refused before it is applied: a live admin the file cannot hold
        // (it keeps the name and the password's hash, never the password).
        if (section == "admins" && value != nullptr &&
            !ConfigValueRoundTrips(key + ":" + (Authenticator::IsPasswordHash(*value) ? *value : ""))) {
          return Status::BadRequest("an admin kept in the config file must not hold '#', '\\', "
                                    "'\"' or control characters in its name or password hash");
        }
        return Status::OK();
      });
    }
    for (auto& extend : Extensions()) extend(couch);
    couch.Start();
    http::HttpServerOptions http_opts;
    http_opts.bind_address = cfg.bind;
    http_opts.port = cfg.port;
    http_opts.threads = cfg.threads > 0 ? cfg.threads
                                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    http_opts.limits.max_body_bytes = cfg.max_request_size;
    http_opts.limits.max_streamed_body_bytes = cfg.max_attachment_size;
    http::HttpServer server(http_opts, &couch);
    Status s = server.Start();
    if (!s.ok()) {
      std::fprintf(stderr, "settee: cannot listen on %s:%d: %s\n", cfg.bind.c_str(), cfg.port,
                   s.ToString().c_str());
      return 1;
    }
    config.Define("chttpd", "port", std::to_string(server.port()));
    std::printf("settee: listening on http://%s:%d/ (%s backend, %d threads%s)\n",
                cfg.bind.find(':') != std::string::npos ? ("[" + cfg.bind + "]").c_str()
                                                        : cfg.bind.c_str(),
                server.port(), cfg.backend.c_str(), http_opts.threads,
                server_opts.admins.empty() ? ", admin party" : "");
    std::fflush(stdout);
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("signal %d: shutting down", sig);
    // A second Ctrl-C during a slow shutdown ends the process the usual way.
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    server.Stop();
  }
  store->reset();
  LogInfo("store closed");
  return 0;
}

}  // namespace

void AddServeExtension(std::function<void(CouchServer&)> extension) {
  Extensions().push_back(std::move(extension));
}

void RegisterServeCommand(CLI::App& app) {
  auto cfg = std::make_shared<ServeConfig>();
  CLI::App* serve = app.add_subcommand("serve", "Serve the CouchDB HTTP API");
  serve->add_option("--port", cfg->port, "TCP port (0 = any free port)")->capture_default_str();
  serve->add_option("--bind", cfg->bind, "Address to bind")->capture_default_str();
  serve->add_option("--data", cfg->data,
                    "Data directory for the leveldb backend (default $SETTEE_DATA, "
                    "$XDG_DATA_HOME/settee or ./settee-data)");
  serve->add_option("--backend", cfg->backend, "leveldb or memory")->capture_default_str();
  serve->add_option("--threads", cfg->threads, "Event-loop threads (default: cores)");
  serve->add_option("--admin", cfg->admins, "Server admin user:password (repeatable; also SETTEE_ADMINS)");
  serve->add_option("--cors-origins", cfg->cors_origins, "Comma-separated CORS origins, or *");
  serve->add_option("--log-level", cfg->log_level, "debug, info, warning, error or none")
      ->capture_default_str();
  serve->add_flag("--sync", cfg->sync, "fsync every write before acknowledging it");
  serve->add_option("--max-document-size", cfg->max_document_size, "Largest document, bytes")
      ->capture_default_str();
  serve->add_option("--max-request-size", cfg->max_request_size,
                    "Largest request body read whole, bytes")
      ->capture_default_str();
  serve->add_option("--max-attachment-size", cfg->max_attachment_size,
                    "Largest standalone attachment upload (streamed to storage), bytes")
      ->capture_default_str();
  serve->add_option("--view-threads", cfg->view_threads,
                    "Isolate threads for design-document code: views, filters, validate_doc_update "
                    "(0 = one per core, at most 16)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  serve->add_option("--view-timeout-ms", cfg->view_timeout_ms,
                    "Time budget of one map/reduce/validate call, ms (CouchDB's os_process_timeout)")
      ->check(CLI::Range(1, 3600000))
      ->capture_default_str();
  // Every option can also come from the TOML/INI file given to the root
  // app's --config (main.cc), in a [serve] section, so credentials need not
  // be on the command line. fallthrough() lets `settee serve --config f`
  // reach that root option.
  serve->fallthrough();
  serve->callback([cfg, &app] {
    std::string config_file;
    if (CLI::Option* opt = app.get_config_ptr(); opt != nullptr && opt->count() > 0) {
      config_file = opt->as<std::string>();
    }
    int rc = RunServe(*cfg, config_file);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace settee
