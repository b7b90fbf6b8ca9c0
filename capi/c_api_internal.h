// Internals shared by the C API's translation units (settee_c.cc: errors,
// stores, databases; settee_c_attachments.cc: attachments and Mango;
// settee_c_js.cc: the JS runtime). Not installed.
//
// Handles and closing
// -------------------
// A settee_store handle, and every settee_db and settee_runtime opened on
// it, share one StoreState. Closing the store (StoreState::Close) stops the
// runtimes first, joining their isolate threads with no lock held (a
// runtime's callback may be in a database call), then, holding the state's
// mutex exclusively, drops the databases' listeners and Database pointers
// (the Store must outlive them) and then the Store. Every database call
// holds the mutex shared for its duration and checks the Store is still
// there, so a closed handle answers SETTEE_ERR_CLOSED instead of touching
// freed memory. Runtime calls hold it only to take their JsRuntime, never
// while blocked in JS. The StoreState lives until its last handle is freed,
// and closes the store then if nobody did.
//
// Replications run on threads of the store's ReplicationJobs (created at
// the first start). Closing cancels them and joins their threads before it
// takes the mutex exclusively, then drops the handles' jobs (a job's
// endpoints hold the store's databases) and the registry.
//
// Design-document JavaScript (views, validate_doc_update, replication
// filters) runs on the store's own PoolViewFunctions (JS builds), made at
// open and started at first use; it goes just before the Store.
//
// Callbacks: thread-locals record which store's mutex this thread holds
// shared (a settee_db_changes callback may call back into the store: the
// mutex is then not taken again) and whose callback it runs (changes rows,
// listeners, runtime reports). Closing from there would wait for the very
// call that is running, or join an isolate thread from itself, so closing
// is refused there and freeing is left undone (the header says so).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string_view>

#include "settee/js_runtime.h"
#include "settee/settee.h"
#include "settee/status.h"
#include "settee/store.h"
#include "storage/view_functions.h"

namespace settee::replication {
class ReplicationJob;
class ReplicationJobs;
}  // namespace settee::replication

namespace settee_c {

//////// Errors: each sets *err (when not NULL) and returns the code.

settee_code Fail(settee_error* err, settee_code code, std::string_view message);
settee_code Fail(settee_error* err, const settee::Status& s);
settee_code Ok(settee_error* err);
settee_code InvalidArgument(settee_error* err, const char* what);
// Checks a required string argument (not NULL, valid UTF-8): SETTEE_OK or
// SETTEE_ERR_INVALID_ARGUMENT.
settee_code Utf8Arg(const char* s, const char* name, settee_error* err);
// Utf8Arg() for an argument that may be NULL.
settee_code OptionalUtf8Arg(const char* s, const char* name, settee_error* err);

// Returns the code of a failed check from the calling function.
#define SETTEE_C_CHECK(expr)                                        \
  do {                                                              \
    if (settee_code check_code_ = (expr); check_code_ != SETTEE_OK) \
      return check_code_;                                           \
  } while (0)
// Sets *out (when out is not NULL) to a malloc'd copy of s.
void Give(char** out, std::string_view s);

// Runs f(), turning an escaping exception into SETTEE_ERR_INTERNAL: no
// exception crosses the C boundary.
template <typename F>
settee_code Guarded(settee_error* err, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Fail(err, SETTEE_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return Fail(err, SETTEE_ERR_INTERNAL, e.what());
  } catch (...) {
    return Fail(err, SETTEE_ERR_INTERNAL, "unknown exception");
  }
}

//////// Callback tracking

// The store whose callback this thread is running (nested callbacks restore
// the outer one), or nullptr.
extern thread_local const void* t_callback_of;
// The store whose mutex this thread holds shared, or nullptr.
extern thread_local const void* t_locked_store;
// True while this thread runs a database change listener, which must not
// call back into the database (it runs under the database's lock).
extern thread_local bool t_in_listener;

class InCallback {
 public:
  explicit InCallback(const void* store) : saved_(t_callback_of) { t_callback_of = store; }
  ~InCallback() { t_callback_of = saved_; }
  InCallback(const InCallback&) = delete;
  InCallback& operator=(const InCallback&) = delete;

 private:
  const void* saved_;
};

//////// Handles

struct StoreState {
  std::shared_mutex mu;
  std::unique_ptr<settee::Store> store;  // guarded by mu; null once closed
  // The open handles. Changed with mu held shared plus registry_mu; read
  // with mu held exclusively.
  std::mutex registry_mu;
  std::set<settee_db*> dbs;
  std::set<settee_runtime*> runtimes;
  std::set<settee_replication*> replications;

  // Set at open, reset by Close (with mu held exclusively, like store).
  std::shared_ptr<settee::views::ViewFunctions> view_functions;
  // Made by the first replication start (under registry_mu); moved out and
  // destroyed by Close.
  std::unique_ptr<settee::replication::ReplicationJobs> jobs;

  bool closing = false;  // guarded by mu: no new runtimes or replications

  // Stops the runtimes, then closes the databases and the store. Idempotent.
  // REQUIRES: mu not held by this thread.
  void Close();
  ~StoreState();
};


// Holds a store's mutex shared, unless this thread already does (a call from
// inside a settee_db_changes callback).
class StoreLock {
 public:
  explicit StoreLock(StoreState* state) : saved_(t_locked_store) {
    if (state && saved_ != state) {
      lock_ = std::shared_lock<std::shared_mutex>(state->mu);
      t_locked_store = state;
    }
  }
  ~StoreLock() { t_locked_store = saved_; }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  const void* saved_;
  std::shared_lock<std::shared_mutex> lock_;
};

// True if closing `state` from this thread would wait for itself.
inline bool InCallbackOf(const StoreState* state) {
  return t_callback_of == state || t_locked_store == state;
}

}  // namespace settee_c

struct settee_store {
  std::shared_ptr<settee_c::StoreState> state;
};

struct settee_db {
  std::shared_ptr<settee_c::StoreState> state;
  std::shared_ptr<settee::Database> db;  // guarded by state->mu; null once closed
  std::mutex listeners_mu;
  std::set<uint64_t> listeners;  // guarded by listeners_mu
};

struct settee_runtime {
  std::shared_ptr<settee_c::StoreState> state;
  std::shared_ptr<settee::JsRuntime> rt;  // guarded by state->mu; null once closed
};

namespace settee_c {
// How a replication ended, filled on its thread when it does: what
// settee_replication_wait waits on, kept apart from the job so that a
// waiter never holds the job (and so the store's databases) past a close.
struct ReplicationEnd {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;      // guarded by mu
  settee::Status result;  // guarded by mu
};
}  // namespace settee_c

struct settee_replication {
  std::shared_ptr<settee_c::StoreState> state;
  // Guarded by state->mu; null once the store is closed.
  std::shared_ptr<settee::replication::ReplicationJob> job;
  std::shared_ptr<settee_c::ReplicationEnd> end;
};

namespace settee_c {

// The store's design-document functions for `options` (nullptr in a build
// without JS), also installed as its validate_doc_update runner
// (settee_c_js.cc).
std::shared_ptr<settee::views::ViewFunctions> MakeViewFunctions(settee::Store* store,
                                                               const settee_store_options& options);

// A database call's view of its handle: the Database, with the store held
// open (shared) until it goes out of scope.
class DbCall {
 public:
  explicit DbCall(settee_db* h) : state_(h ? h->state : nullptr), lock_(state_.get()) {
    if (state_ && state_->store) db_ = h->db;
  }
  // SETTEE_OK, or why there is no database to call.
  settee_code Check(settee_db* h, settee_error* err) const {
    if (!h) return InvalidArgument(err, "db is NULL");
    if (t_in_listener) {
      return Fail(err, SETTEE_ERR_INVALID_OPERATION, "a change listener must not call into the database");
    }
    if (!db_) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    return SETTEE_OK;
  }
  settee::Database* operator->() const { return db_.get(); }
  settee::Database& db() const { return *db_; }
  // REQUIRES: Check() was SETTEE_OK (the store is open and stays so).
  settee::Store& store_ref() const { return *state_->store; }
  // The store's design-document functions (nullptr without JS).
  settee::views::ViewFunctions* view_functions() const { return state_->view_functions.get(); }
  const void* store() const { return state_.get(); }

 private:
  std::shared_ptr<StoreState> state_;  // declared first: outlives the lock
  StoreLock lock_;
  std::shared_ptr<settee::Database> db_;
};

}  // namespace settee_c
