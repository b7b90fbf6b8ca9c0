// Per-request CPU cost of the HTTP layer, without sockets: parsing a request,
// routing it, and serializing a typical response. The end-to-end figures
// (wrk against settee and pouchdb-server) come from scripts/bench_http.sh.
#include <benchmark/benchmark.h>

#include <string>

#include "runtime/couch_server.h"
#include "runtime/endpoint_helpers.h"
#include "runtime/request_parser.h"
#include "runtime/router.h"

namespace settee {
namespace {

const std::string kGet =
    "GET /bench/_all_docs?limit=10&include_docs=true HTTP/1.1\r\nHost: 127.0.0.1:5984\r\n"
    "User-Agent: bench\r\nAccept: application/json\r\nConnection: keep-alive\r\n\r\n";
const std::string kPut =
    "PUT /bench/doc-000123 HTTP/1.1\r\nHost: 127.0.0.1:5984\r\nContent-Type: application/json\r\n"
    "Content-Length: 44\r\n\r\n{\"type\":\"bench\",\"value\":42,\"tags\":[\"a\",\"b\"]}";

void ParseRequest(benchmark::State& state, const std::string& text) {
  http::RequestParser parser(http::ParserLimits{});
  for (auto _ : state) {
    size_t pos = 0, used = 0;
    for (;;) {
      auto e = parser.Execute(std::string_view(text).substr(pos), &used);
      pos += used;
      if (e == http::RequestParser::Event::kMessageComplete) break;
      if (e == http::RequestParser::Event::kError) state.SkipWithError("parse error");
    }
    benchmark::DoNotOptimize(parser.TakeRequest());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
void ParseGet(benchmark::State& state) { ParseRequest(state, kGet); }
void ParsePut(benchmark::State& state) { ParseRequest(state, kPut); }
BENCHMARK(ParseGet);
BENCHMARK(ParsePut);

void RouteRequest(benchmark::State& state) {
  Router router;
  RouteHandler noop = [](RequestContext&) { return Status::OK(); };
  // Roughly the server's route table: about 40 patterns.
  for (const char* p : {"/", "/_up", "/_all_dbs", "/_uuids", "/_active_tasks", "/_session"}) {
    router.Add("GET,HEAD", p, noop);
  }
  for (const char* p : {"_all_docs", "_design_docs", "_local_docs", "_bulk_docs", "_bulk_get",
                        "_revs_diff", "_missing_revs", "_compact", "_ensure_full_commit",
                        "_revs_limit", "_security", "_changes", "_find", "_index", "_explain"}) {
    router.Add("GET,POST", std::string("/{db}/") + p, noop);
  }
  router.Add("GET,PUT", "/{db}", noop);
  router.Add("GET,PUT,DELETE", "/{db}/{docid}", noop);
  router.Add("GET,PUT,DELETE", "/{db}/_design/{ddoc}", noop);
  router.Add("GET,PUT,DELETE", "/{db}/_local/{id}", noop);
  router.Add("GET", "/{db}/_design/{ddoc}/_view/{view}", noop);
  router.Add("GET,PUT,DELETE", "/{db}/{docid}/{*att}", noop);
  std::vector<std::string> segments;
  SplitPath(state.range(0) == 0 ? "/bench/doc-000123" : "/bench/_design/app/_view/by_type",
            &segments);
  Router::Match match;
  for (auto _ : state) {
    benchmark::DoNotOptimize(router.Find("GET", segments, &match));
  }
}
BENCHMARK(RouteRequest)->Arg(0)->Arg(1)->ArgNames({"view_route"});

void SerializeAllDocs(benchmark::State& state) {
  AllDocsResult result;
  result.total_rows = 1000;
  for (int i = 0; i < state.range(0); ++i) {
    AllDocsRow row;
    row.id = "doc-" + std::to_string(i);
    row.rev = "1-0123456789abcdef0123456789abcdef";
    row.doc = R"({"_id":")" + row.id + R"(","_rev":")" + row.rev + R"(","value":42})";
    result.rows.push_back(std::move(row));
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(AllDocsJson(result, false));
  }
  state.counters["rows"] = static_cast<double>(state.range(0));
}
BENCHMARK(SerializeAllDocs)->Arg(10)->Arg(100);

}  // namespace
}  // namespace settee

BENCHMARK_MAIN();
