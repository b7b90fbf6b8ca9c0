// The `native.db*` view functions behind PouchDB's query() and viewCleanup()
// (js/prelude/pouchdb.js): persisted and temporary views through
// storage/views.h, with the map and reduce functions run in this very
// isolate (the caller awaits a promise, so its thread is ours to use) by
// js/prelude/views.js. The isolate's time budget covers the whole call, so
// a map function that loops is terminated like any runaway script.
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "js/view_functions_js.h"
#include "settee/store.h"
#include "storage/mango.h"
#include "storage/views.h"
#include "util/json.h"

namespace settee::js {

namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

// Runs view code in the calling isolate through two JS functions taking and
// returning JSON text: map(codeJson, docsJson), reduce(codeJson, source,
// callsJson). The first JS exception is kept to be rethrown as is.
class LocalViewFunctions final : public views::ViewFunctions {
 public:
  LocalViewFunctions(v8::Isolate* isolate, v8::Local<v8::Function> map, v8::Local<v8::Function> reduce)
      : isolate_(isolate), map_(map), reduce_(reduce) {}

  Status Map(const views::MapCode& code, const std::vector<std::string>& docs,
             std::string* out) override {
    std::string arg = "[";
    for (size_t i = 0; i < docs.size(); ++i) {
      if (i) arg += ',';
      arg += docs[i];
    }
    arg += ']';
    return Call(map_, {MapCodeJson(code), std::move(arg)}, out);
  }

  Status Reduce(const views::MapCode& code, const std::string& source, std::string_view calls_json,
                std::string* out) override {
    return Call(reduce_, {MapCodeJson(code), source, std::string(calls_json)}, out);
  }

  // The JS exception a call threw, if any.
  v8::Local<v8::Value> exception() const { return exception_; }

 private:
  Status Call(v8::Local<v8::Function> fn, std::vector<std::string> args, std::string* out) {
    v8::Local<v8::Context> ctx = isolate_->GetCurrentContext();
    std::vector<v8::Local<v8::Value>> argv;
    for (const std::string& a : args) {
      v8::Local<v8::String> s;
      if (!v8::String::NewFromUtf8(isolate_, a.data(), v8::NewStringType::kNormal,
                                   static_cast<int>(a.size())).ToLocal(&s)) {
        return Status::BadRequest("argument too large for a JS string");
      }
      argv.push_back(s);
    }
    v8::TryCatch tc(isolate_);
    v8::Local<v8::Value> r;
    if (!fn->Call(ctx, v8::Undefined(isolate_), static_cast<int>(argv.size()), argv.data()).ToLocal(&r)) {
      if (tc.HasTerminated() || !tc.CanContinue()) {
        tc.ReThrow();
        return Status(Status::Code::kTimeout, "JavaScript execution was terminated");
      }
      if (tc.HasCaught()) {
        exception_ = tc.Exception();
        return Status::Internal(ToUtf8(isolate_, tc.Exception()));
      }
      return Status::Internal("view function failed");
    }
    *out = ToUtf8(isolate_, r);
    return Status::OK();
  }

  v8::Isolate* isolate_;
  v8::Local<v8::Function> map_;
  v8::Local<v8::Function> reduce_;
  v8::Local<v8::Value> exception_;
};

IsolateThread* Self(const Args& args) { return IsolateThread::From(args.GetIsolate()); }

// The database behind handle args[0], or nullptr with a JS error thrown.
// Borrowed for this call (IsolateThread::Db).
Database* DbArg(const Args& args) {
  IsolateThread* t = Self(args);
  int h = args[0]->IsInt32() ? args[0].As<v8::Int32>()->Value() : -1;
  auto db = t->Db(h);
  if (!db) t->ThrowStatus(Status::NotFound("database handle is closed"));
  return db;
}

// Parses the options JSON text in args[i] into a ViewQuery.
bool QueryArg(const Args& args, int i, views::ViewQuery* q) {
  json::Document o;
  Status s = args[i]->IsString() ? json::Parse(ToUtf8(args.GetIsolate(), args[i]), &o) : Status::OK();
  if (!args[i]->IsString()) o.SetObject();
  if (s.ok()) {
    auto r = views::ParseViewQuery(o);
    if (r.ok()) {
      *q = std::move(r).value();
      return true;
    }
    s = r.status();
  }
  Self(args)->ThrowStatus(s);
  return false;
}

// Answers a query's outcome: the parsed result, or the JS exception the
// view code threw, or a PouchDB error for the status.
void Finish(const Args& args, LocalViewFunctions& fns, const Status& s, const std::string& out) {
  v8::Isolate* isolate = args.GetIsolate();
  if (!s.ok()) {
    if (isolate->IsExecutionTerminating()) return;
    if (!fns.exception().IsEmpty()) {
      isolate->ThrowException(fns.exception());
    } else {
      Self(args)->ThrowStatus(s);
    }
    return;
  }
  v8::Local<v8::Value> v;
  if (JsonToV8(isolate->GetCurrentContext(), out).ToLocal(&v)) args.GetReturnValue().Set(v);
}

bool FunctionsArgs(const Args& args, int i) {
  if (args[i]->IsFunction() && args[i + 1]->IsFunction()) return true;
  Self(args)->ThrowStatus(Status::Internal("view runtime functions missing"));
  return false;
}

// dbQuery(h, ddocName, viewName, optsJson, mapFn, reduceFn)
void DbQuery(const Args& args) {
  auto db = DbArg(args);
  if (!db || !FunctionsArgs(args, 4)) return;
  views::ViewQuery q;
  if (!QueryArg(args, 3, &q)) return;
  Store* store = Self(args)->store();
  LocalViewFunctions fns(args.GetIsolate(), args[4].As<v8::Function>(), args[5].As<v8::Function>());
  std::string out;
  Status s = views::Query(*store, *db, &fns, ToUtf8(args.GetIsolate(), args[1]),
                          ToUtf8(args.GetIsolate(), args[2]), q, &out);
  Finish(args, fns, s, out);
}

// dbTempQuery(h, mapSource, reduceSource|null, optsJson, mapFn, reduceFn)
void DbTempQuery(const Args& args) {
  auto db = DbArg(args);
  if (!db || !FunctionsArgs(args, 4)) return;
  views::ViewQuery q;
  if (!QueryArg(args, 3, &q)) return;
  std::string reduce = args[2]->IsString() ? ToUtf8(args.GetIsolate(), args[2]) : std::string();
  views::DesignDoc temp =
      views::TempDesignDoc("javascript", ToUtf8(args.GetIsolate(), args[1]), std::move(reduce));
  LocalViewFunctions fns(args.GetIsolate(), args[4].As<v8::Function>(), args[5].As<v8::Function>());
  std::string out;
  Status s = views::TempQuery(*db, &fns, temp, q, &out);
  Finish(args, fns, s, out);
}

// dbViewCleanup(h)
void DbViewCleanup(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  Status s = views::Cleanup(*Self(args)->store(), *db);
  if (!s.ok()) Self(args)->ThrowStatus(s);
}

// dbMango(h, op, bodyJson[, ddoc, name]): op is "createIndex", "getIndexes",
// "deleteIndex", "find" or "explain" (storage/mango.h, CouchDB's bodies).
void DbMango(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  std::string op = ToUtf8(isolate, args[1]);
  std::string body = args[2]->IsString() ? ToUtf8(isolate, args[2]) : std::string();
  Store* store = Self(args)->store();
  std::string out;
  Status s;
  if (op == "createIndex") {
    s = mango::CreateIndex(*store, *db, body, &out);
  } else if (op == "getIndexes") {
    s = mango::ListIndexes(*db, &out);
  } else if (op == "deleteIndex") {
    s = mango::DeleteIndex(*db, ToUtf8(isolate, args[3]), ToUtf8(isolate, args[4]), &out);
  } else if (op == "find") {
    s = mango::Find(*store, *db, body, &out);
  } else if (op == "explain") {
    s = mango::Explain(*store, *db, body, &out);
  } else {
    s = Status::BadRequest("unknown Mango operation " + op);
  }
  if (!s.ok()) {
    Self(args)->ThrowStatus(s);
    return;
  }
  v8::Local<v8::Value> v;
  if (JsonToV8(isolate->GetCurrentContext(), out).ToLocal(&v)) args.GetReturnValue().Set(v);
}

}  // namespace

void InstallViewBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->context();
  SetFn(ctx, native, "dbQuery", DbQuery);
  SetFn(ctx, native, "dbTempQuery", DbTempQuery);
  SetFn(ctx, native, "dbViewCleanup", DbViewCleanup);
  SetFn(ctx, native, "dbMango", DbMango);
}

}  // namespace settee::js
