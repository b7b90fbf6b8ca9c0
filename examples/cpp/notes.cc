// An application embedding settee through its C++ API (settee/store.h,
// settee/database.h, settee/js_runtime.h): opens a store, writes documents,
// reads them back, then runs a JavaScript script on the runtime's isolate
// threads against the same store.
//
//   notes_cpp [DIR]     LevelDB store in DIR; without DIR an in-memory store
#include <settee/js_runtime.h>
#include <settee/store.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

int Fail(const char* what, const settee::Status& s) {
  std::fprintf(stderr, "%s failed: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  settee::StoreOptions options;
  if (argc > 1) {
    options.path = argv[1];
  } else {
    options.backend = settee::StoreOptions::Backend::kMemory;
  }
  auto store = settee::Store::Open(options);
  if (!store.ok()) return Fail("Store::Open", store.status());

  auto db = (*store)->OpenDatabase("notes");
  if (!db.ok()) db = (*store)->CreateDatabase("notes");
  if (!db.ok()) return Fail("open notes", db.status());

  auto put = (*db)->Put("first", R"({"text":"hello from C++"})");
  if (!put.ok()) return Fail("Put", put.status());
  std::printf("put first -> %s %s\n", put->rev.c_str(), put->status.ok() ? "" : put->status.ToString().c_str());

  std::vector<settee::DocUpdateResult> results;
  settee::Status s = (*db)->BulkDocsArray(
      R"([{"_id":"second","text":"two words"},{"_id":"third","text":"and three more"}])", {}, &results);
  if (!s.ok()) return Fail("BulkDocsArray", s);
  for (const auto& r : results) std::printf("bulk %s -> %s\n", r.id.c_str(), r.status.ok() ? r.rev.c_str() : r.status.ToString().c_str());

  auto doc = (*db)->Get("first");
  if (!doc.ok()) return Fail("Get", doc.status());
  std::printf("get first -> %s\n", doc->c_str());

  settee::AllDocsResult all;
  s = (*db)->AllDocs({}, &all);
  if (!s.ok()) return Fail("AllDocs", s);
  std::printf("all_docs -> %llu rows\n", static_cast<unsigned long long>(all.total_rows));

  if (settee::JsRuntimeAvailable()) {
    settee::JsRuntimeOptions jo;
    jo.threads = 2;
    jo.on_message = [](int thread, const std::string& json) {
      std::printf("message from JS thread %d: %s\n", thread, json.c_str());
    };
    auto rt = settee::JsRuntime::Start(store->get(), jo);
    if (!rt.ok()) return Fail("JsRuntime::Start", rt.status());
    s = (*rt)->RunSource(0, "summary.js", R"JS(
      const db = new PouchDB('notes');
      db.allDocs({include_docs: true}).then((r) => {
        const words = r.rows.map((row) => row.doc.text).join(' ');
        return db.put({_id: 'summary', words: words.split(' ').length, by: 'js'});
      }).then(() => settee.postMessage('summary written'));
    )JS");
    if (!s.ok()) return Fail("RunSource", s);
    int exit_code = (*rt)->Wait();
    auto words = (*rt)->Call(settee::JsRuntime::kAnyThread,
                             "(id) => new PouchDB('notes').get(id).then((d) => d.words)", "\"summary\"");
    if (!words.ok()) return Fail("Call", words.status());
    std::printf("JS exit code %d, summary words = %s\n", exit_code, words->c_str());
    (*rt)->Shutdown();  // before the store goes: the runtime uses it
  }
  std::printf("ok\n");
  return 0;
}
