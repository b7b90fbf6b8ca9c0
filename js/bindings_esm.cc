// ECMAScript modules for settee run: the `native.esm*` functions behind
// js/prelude/esm.js, and V8's host callbacks for import() and import.meta.
//
// The JS loader does the resolving: it compiles a module (esmCompile), reads
// its import specifiers, resolves and compiles each dependency (a file
// module, or a synthetic module over a CommonJS module's or a built-in's
// exports: esmSynthetic) and records the edges (esmLink). Instantiation
// then only looks the edges up (ResolveCallback), so V8 never waits on the
// file system or calls back into JS while it links.
//
// State is per isolate (thread_local: one isolate per thread at a time) and
// cleared when the isolate is disposed (IsolateThread::AtDispose).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <v8-container.h>
#include <v8-context.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-isolate.h>
#include <v8-primitive.h>
#include <v8-promise.h>
#include <v8-script.h>

#include "js/convert.h"
#include "js/isolate_thread.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

struct ModuleRecord {
  v8::Global<v8::Module> module;
  std::string filename;                  // a path, or "node:fs" for a built-in
  v8::Global<v8::Object> exports;        // synthetic modules: the values
  std::map<std::string, int> links;      // specifier -> module id
};

struct EsmState {
  std::map<int, ModuleRecord> modules;   // by id (1, 2, ...)
  std::multimap<int, int> by_hash;       // identity hash -> ids
  int next_id = 1;
  bool registered = false;               // AtDispose installed
};

thread_local EsmState state;

int IdOf(v8::Local<v8::Module> module) {
  auto range = state.by_hash.equal_range(module->GetIdentityHash());
  for (auto it = range.first; it != range.second; ++it) {
    ModuleRecord& r = state.modules[it->second];
    if (r.module == module) return it->second;
  }
  return 0;
}

ModuleRecord* RecordArg(const Args& args) {
  const int id = args[0]->IsNumber() ? static_cast<int>(args[0].As<v8::Number>()->Value()) : 0;
  auto it = state.modules.find(id);
  if (it == state.modules.end()) {
    args.GetIsolate()->ThrowException(v8::Exception::Error(ToV8String(args.GetIsolate(), "no such module")));
    return nullptr;
  }
  return &it->second;
}

int Register(IsolateThread* t, v8::Local<v8::Module> module, std::string filename) {
  if (!state.registered) {
    state.registered = true;
    t->AtDispose([] { state = EsmState{}; });
  }
  const int id = state.next_id++;
  ModuleRecord& r = state.modules[id];
  r.module.Reset(t->isolate(), module);
  r.filename = std::move(filename);
  state.by_hash.emplace(module->GetIdentityHash(), id);
  return id;
}

// native.esmCompile(source, filename) -> [id, specifiers]; throws the
// SyntaxError.
void EsmCompile(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (!args[0]->IsString()) return;
  v8::ScriptOrigin origin(isolate, args[1], 0, 0, false, -1, v8::Local<v8::Value>(), false, false,
                          /*is_module=*/true);
  v8::ScriptCompiler::Source source(args[0].As<v8::String>(), origin);
  v8::Local<v8::Module> module;
  if (!v8::ScriptCompiler::CompileModule(isolate, &source).ToLocal(&module)) return;
  const int id = Register(t, module, ToUtf8(isolate, args[1]));
  v8::Local<v8::FixedArray> requests = module->GetModuleRequests();
  v8::Local<v8::Array> specifiers = v8::Array::New(isolate, requests->Length());
  for (int i = 0; i < requests->Length(); ++i) {
    v8::Local<v8::ModuleRequest> request = requests->Get(ctx, i).As<v8::ModuleRequest>();
    if (specifiers->Set(ctx, i, request->GetSpecifier()).IsNothing()) return;
  }
  v8::Local<v8::Array> out = v8::Array::New(isolate, 2);
  if (out->Set(ctx, 0, v8::Integer::New(isolate, id)).IsNothing() || out->Set(ctx, 1, specifiers).IsNothing()) {
    return;
  }
  args.GetReturnValue().Set(out);
}

// A synthetic module's evaluation: each export from its values object.
v8::MaybeLocal<v8::Value> EvaluateSynthetic(v8::Local<v8::Context> ctx, v8::Local<v8::Module> module) {
  v8::Isolate* isolate = ctx->GetIsolate();
  auto it = state.modules.find(IdOf(module));
  if (it == state.modules.end()) return {};
  v8::Local<v8::Object> values = it->second.exports.Get(isolate);
  v8::Local<v8::Array> names;
  if (!values->GetOwnPropertyNames(ctx).ToLocal(&names)) return {};
  for (uint32_t i = 0; i < names->Length(); ++i) {
    v8::Local<v8::Value> name;
    v8::Local<v8::Value> value;
    if (!names->Get(ctx, i).ToLocal(&name) || !values->Get(ctx, name).ToLocal(&value) ||
        module->SetSyntheticModuleExport(isolate, name.As<v8::String>(), value).IsNothing()) {
      return {};
    }
  }
  v8::Local<v8::Promise::Resolver> done;
  if (!v8::Promise::Resolver::New(ctx).ToLocal(&done) || done->Resolve(ctx, v8::Undefined(isolate)).IsNothing()) {
    return {};
  }
  return done->GetPromise();
}

// native.esmSynthetic(name, values) -> id: a module exporting each own
// property of `values` (its names are the export names).
void EsmSynthetic(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (!args[0]->IsString() || !args[1]->IsObject()) return;
  v8::Local<v8::Object> values = args[1].As<v8::Object>();
  v8::Local<v8::Array> names;
  if (!values->GetOwnPropertyNames(ctx).ToLocal(&names)) return;
  std::vector<v8::Local<v8::String>> export_names;
  for (uint32_t i = 0; i < names->Length(); ++i) {
    v8::Local<v8::Value> name;
    if (!names->Get(ctx, i).ToLocal(&name)) return;
    export_names.push_back(name.As<v8::String>());
  }
  v8::Local<v8::Module> module =
      v8::Module::CreateSyntheticModule(isolate, args[0].As<v8::String>(), export_names, EvaluateSynthetic);
  const int id = Register(t, module, ToUtf8(isolate, args[0]));
  state.modules[id].exports.Reset(isolate, values);
  args.GetReturnValue().Set(id);
}

// native.esmLink(id, specifier, dependencyId): what `specifier` in module
// `id` resolves to.
void EsmLink(const Args& args) {
  ModuleRecord* r = RecordArg(args);
  if (r == nullptr) return;
  r->links[ToUtf8(args.GetIsolate(), args[1])] = static_cast<int>(args[2].As<v8::Number>()->Value());
}

v8::MaybeLocal<v8::Module> ResolveCallback(v8::Local<v8::Context> ctx, v8::Local<v8::String> specifier,
                                           v8::Local<v8::FixedArray>, v8::Local<v8::Module> referrer) {
  v8::Isolate* isolate = ctx->GetIsolate();
  auto it = state.modules.find(IdOf(referrer));
  const std::string spec = ToUtf8(isolate, specifier);
  if (it != state.modules.end()) {
    auto link = it->second.links.find(spec);
    if (link != it->second.links.end()) return state.modules[link->second].module.Get(isolate);
  }
  isolate->ThrowException(v8::Exception::Error(ToV8String(isolate, "Cannot find module '" + spec + "'")));
  return {};
}

// native.esmInstantiate(id): links the module graph (every edge recorded).
void EsmInstantiate(const Args& args) {
  ModuleRecord* r = RecordArg(args);
  if (r == nullptr) return;
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Module> module = r->module.Get(isolate);
  if (module->GetStatus() != v8::Module::kUninstantiated) return;
  // A failed link leaves its exception pending: it is what the JS caller sees.
  if (module->InstantiateModule(isolate->GetCurrentContext(), ResolveCallback).IsNothing()) return;
}

// native.esmEvaluate(id) -> the promise of its evaluation (top-level await).
void EsmEvaluate(const Args& args) {
  ModuleRecord* r = RecordArg(args);
  if (r == nullptr) return;
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Value> result;
  if (r->module.Get(isolate)->Evaluate(isolate->GetCurrentContext()).ToLocal(&result)) {
    args.GetReturnValue().Set(result);
  }
}

// native.esmEvaluateSync(id) -> true once the module (and its imports) ran
// to the end; false, without running it, if its graph awaits at the top
// level anywhere (even if that already ran, as node refuses it); throws
// what it threw.
void EsmEvaluateSync(const Args& args) {
  ModuleRecord* r = RecordArg(args);
  if (r == nullptr) return;
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Module> module = r->module.Get(isolate);
  if (module->IsGraphAsync()) {
    args.GetReturnValue().Set(false);
    return;
  }
  v8::Local<v8::Value> result;
  if (!module->Evaluate(isolate->GetCurrentContext()).ToLocal(&result)) return;
  if (!result->IsPromise()) {
    args.GetReturnValue().Set(true);
    return;
  }
  v8::Local<v8::Promise> promise = result.As<v8::Promise>();
  switch (promise->State()) {
    case v8::Promise::kFulfilled:
      args.GetReturnValue().Set(true);
      return;
    case v8::Promise::kRejected:
      promise->MarkAsHandled();
      isolate->ThrowException(promise->Result());
      return;
    case v8::Promise::kPending:
      args.GetReturnValue().Set(false);
      return;
  }
}

// native.esmNamespace(id) -> the module namespace object.
void EsmNamespace(const Args& args) {
  ModuleRecord* r = RecordArg(args);
  if (r == nullptr) return;
  args.GetReturnValue().Set(r->module.Get(args.GetIsolate())->GetModuleNamespace());
}

// import(specifier) from a module or a CommonJS script: the prelude's
// hooks.esmImport(specifier, referrerFilename) does the work.
v8::MaybeLocal<v8::Promise> DynamicImport(v8::Local<v8::Context> ctx, v8::Local<v8::Data>,
                                          v8::Local<v8::Value> resource_name, v8::Local<v8::String> specifier,
                                          v8::Local<v8::FixedArray>) {
  v8::Isolate* isolate = ctx->GetIsolate();
  IsolateThread* t = IsolateThread::From(isolate);
  v8::Local<v8::Value> argv[] = {specifier, resource_name};
  v8::Local<v8::Value> result;
  if (!t->hook(IsolateThread::kEsmImport)->Call(ctx, v8::Undefined(isolate), 2, argv).ToLocal(&result) ||
      !result->IsPromise()) {
    return {};
  }
  return result.As<v8::Promise>();
}

// import.meta: url, filename and dirname, as node 20 gives them.
void InitializeImportMeta(v8::Local<v8::Context> ctx, v8::Local<v8::Module> module, v8::Local<v8::Object> meta) {
  v8::Isolate* isolate = ctx->GetIsolate();
  auto it = state.modules.find(IdOf(module));
  if (it == state.modules.end()) return;
  const std::string& filename = it->second.filename;
  IsolateThread* t = IsolateThread::From(isolate);
  v8::Local<v8::Value> argv[] = {ToV8String(isolate, filename), meta};
  // A hook that throws leaves its exception pending for the import that
  // asked for import.meta; there is nothing to return here either way.
  if (t->hook(IsolateThread::kEsmMeta)->Call(ctx, v8::Undefined(isolate), 2, argv).IsEmpty()) return;
}

}  // namespace

void InstallEsmBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Isolate* isolate = t->isolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  isolate->SetHostImportModuleDynamicallyCallback(DynamicImport);
  isolate->SetHostInitializeImportMetaObjectCallback(InitializeImportMeta);
  SetFn(ctx, native, "esmCompile", EsmCompile);
  SetFn(ctx, native, "esmSynthetic", EsmSynthetic);
  SetFn(ctx, native, "esmLink", EsmLink);
  SetFn(ctx, native, "esmInstantiate", EsmInstantiate);
  SetFn(ctx, native, "esmEvaluate", EsmEvaluate);
  SetFn(ctx, native, "esmEvaluateSync", EsmEvaluateSync);
  SetFn(ctx, native, "esmNamespace", EsmNamespace);
}

}  // namespace settee::js
