/* An application embedding settee through its C API (settee/settee.h):
 * opens a store, writes documents, reads them back, follows the changes
 * feed, queries a map/reduce view, backs the database up by replication,
 * then runs a JavaScript script on the runtime's isolate threads against
 * the same store.
 *
 *   notes [DIR]     LevelDB store in DIR; without DIR an in-memory store
 *
 * Prints what it did and exits 0, or prints the failing call's error and
 * exits 1. */
#include <settee/settee.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(settee_code code, settee_error* err, const char* what) {
  if (code == SETTEE_OK) return 1;
  fprintf(stderr, "%s failed: %s: %s\n", what, settee_code_name(code),
          err->message ? err->message : "");
  settee_error_clear(err);
  return 0;
}

static int print_change(void* context, const settee_change* change) {
  int* count = (int*)context;
  ++*count;
  printf("change %llu: %s %s%s\n", (unsigned long long)change->seq, change->id,
         change->n_revs > 0 ? change->revs[0] : "", change->deleted ? " (deleted)" : "");
  return 1; /* go on */
}

static const char kScript[] =
    "const db = new PouchDB('notes');\n"
    "db.allDocs({include_docs: true}).then((r) => {\n"
    "  const words = r.rows.filter((row) => row.doc.text).map((row) => row.doc.text).join(' ');\n"
    "  return db.put({_id: 'summary', words: words.split(' ').length, by: 'js'});\n"
    "}).then(() => settee.postMessage('summary written'));\n";

/* Notes by their number of words; reduced, how many there are. */
static const char kDesign[] =
    "{\"views\":{\"by_words\":{"
    "\"map\":\"function (doc) { if (doc.text) emit(doc.text.split(' ').length, doc._id); }\","
    "\"reduce\":\"_count\"}}}";

static void on_message(void* context, int thread, const char* json) {
  (void)context;
  printf("message from JS thread %d: %s\n", thread, json);
}

int main(int argc, char** argv) {
  settee_error err = SETTEE_ERROR_INIT;
  settee_store_options options;
  settee_store_options_init(&options);
  if (argc > 1) {
    options.path = argv[1];
  } else {
    options.backend = SETTEE_BACKEND_MEMORY;
  }
  settee_store* store = NULL;
  if (!check(settee_store_open(&options, &store, &err), &err, "settee_store_open")) return 1;

  settee_db* db = NULL;
  settee_code code = settee_db_open(store, "notes", &db, &err);
  if (code == SETTEE_ERR_NOT_FOUND) code = settee_db_create(store, "notes", &db, &err);
  if (!check(code, &err, "open notes")) return 1;

  char* rev = NULL;
  if (!check(settee_db_put(db, "first", "{\"text\":\"hello from C\"}", NULL, &rev, &err), &err,
             "put")) {
    /* Run twice on one directory: the note is there already. */
    char* doc = NULL;
    if (!check(settee_db_get(db, "first", NULL, &doc, &err), &err, "get")) return 1;
    settee_free(doc);
  } else {
    printf("put first -> %s\n", rev);
  }
  settee_free(rev);

  char* results = NULL;
  if (!check(settee_db_bulk_docs(db, "[{\"_id\":\"second\",\"text\":\"two words\"},"
                                     "{\"_id\":\"third\",\"text\":\"and three more\"}]",
                                 1, &results, &err),
             &err, "bulk_docs"))
    return 1;
  printf("bulk -> %s\n", results);
  settee_free(results);

  char* doc = NULL;
  if (!check(settee_db_get(db, "first", NULL, &doc, &err), &err, "get")) return 1;
  printf("get first -> %s\n", doc);
  settee_free(doc);

  settee_all_docs_options all;
  memset(&all, 0, sizeof all);
  all.include_docs = 1;
  char* rows = NULL;
  if (!check(settee_db_all_docs(db, &all, &rows, &err), &err, "all_docs")) return 1;
  printf("all_docs -> %s\n", rows);
  settee_free(rows);

  int changes = 0;
  uint64_t last_seq = 0;
  if (!check(settee_db_changes(db, NULL, print_change, &changes, &last_seq, &err), &err, "changes"))
    return 1;

  if (settee_has_js()) { /* the map function is JavaScript */
    code = settee_db_put(db, "_design/notes", kDesign, NULL, NULL, &err);
    if (code == SETTEE_ERR_CONFLICT) settee_error_clear(&err); /* there from an earlier run */
    else if (!check(code, &err, "put _design/notes")) return 1;
    char* view = NULL;
    if (!check(settee_db_query(db, "notes", "by_words", "{\"reduce\":false,\"startkey\":2}", &view, &err),
               &err, "query"))
      return 1;
    printf("view by_words from 2 -> %s\n", view);
    settee_free(view);
    if (!check(settee_db_query(db, "notes", "by_words", NULL, &view, &err), &err, "query")) return 1;
    printf("view by_words reduced -> %s\n", view);
    settee_free(view);
  }

  /* A backup of the notes in another database of the store, by replication
   * (a URL such as "http://user:pass@host:5984/notes" works the same). */
  settee_replication* rep = NULL;
  if (!check(settee_replication_start(store, "notes", "notes_backup", "{\"create_target\":true}", &rep, &err),
             &err, "replication_start") ||
      !check(settee_replication_wait(rep, 0, &err), &err, "replication_wait"))
    return 1;
  char* status = NULL;
  if (!check(settee_replication_status(rep, NULL, &status, &err), &err, "replication_status")) return 1;
  printf("replicated -> %s\n", status);
  settee_free(status);
  settee_replication_free(rep);

  if (settee_has_js()) {
    settee_runtime_options ro;
    settee_runtime_options_init(&ro);
    ro.threads = 2;
    ro.jitless = getenv("NOTES_JITLESS") != NULL;
    ro.on_message = on_message;
    settee_runtime* rt = NULL;
    if (!check(settee_runtime_start(store, &ro, &rt, &err), &err, "runtime_start")) return 1;
    int exit_code = -1;
    if (!check(settee_runtime_run_string(rt, 0, kScript, "summary.js", &err), &err, "run_string") ||
        !check(settee_runtime_wait(rt, &exit_code, &err), &err, "wait"))
      return 1;
    char* value = NULL;
    if (!check(settee_runtime_call(rt, SETTEE_ANY_THREAD,
                                   "(id) => new PouchDB('notes').get(id).then((d) => d.words)",
                                   "\"summary\"", &value, &err),
               &err, "call"))
      return 1;
    printf("JS exit code %d, summary words = %s\n", exit_code, value);
    settee_free(value);
    settee_runtime_free(rt);
  }

  settee_db_free(db);
  settee_store_free(store);
  printf("ok (%d changes up to seq %llu)\n", changes, (unsigned long long)last_seq);
  return 0;
}
