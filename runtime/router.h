// Router: maps (method, path) to a handler. Every endpoint of the server,
// including those other modules add (views, Mango, attachments, replication),
// is mounted here.
//
// Patterns are '/'-separated segments:
//   literal     matches itself exactly ("_all_docs")
//   {name}      matches any one segment (percent-decoded, so "a%2Fb" is "a/b")
//   {*name}     matches one or more remaining segments, joined with '/'
// A path may match several patterns; the most specific wins, comparing segment
// by segment: literal > {name} > {*name}. Routes with the same pattern pool
// their methods; a path whose best pattern lacks the method is a 405.
//
// Thread safety: Add() during setup only; Find() concurrently afterwards.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

class RequestContext;
using RouteHandler = std::function<Status(RequestContext&)>;

// Splits a raw (still encoded) URL path into percent-decoded segments.
// "/db/doc%2Fx/" -> {"db", "doc/x"}. Empty segments are dropped. False on a
// malformed escape.
bool SplitPath(std::string_view raw_path, std::vector<std::string>* segments);

class Router {
 public:
  enum class Outcome { kFound, kNotFound, kMethodNotAllowed };
  // kStreamed: the handler reads the request body from
  // HttpRequest::body_reader as it arrives instead of from a buffered
  // HttpRequest::body; kStreamedIfMultipart: only a multipart/related one
  // (a document with its attachments' bodies).
  enum class BodyMode { kBuffered, kStreamed, kStreamedIfMultipart };

  struct Match {
    const RouteHandler* handler = nullptr;
    // Captured values in pattern order ({name} and {*name}).
    std::vector<std::string> params;
    // With kMethodNotAllowed: the allowed methods, "GET,HEAD".
    std::string allowed;
    // How the route takes its request body.
    BodyMode body_mode = BodyMode::kBuffered;
  };

  // `methods` is a comma-separated list ("GET,HEAD,POST").
  void Add(std::string_view methods, std::string_view pattern, RouteHandler handler,
           BodyMode body_mode = BodyMode::kBuffered);

  Outcome Find(std::string_view method, const std::vector<std::string>& segments,
               Match* match) const;

 private:
  struct Segment {
    enum Kind { kLiteral = 2, kParam = 1, kRest = 0 } kind;
    std::string text;
  };
  struct Route {
    std::vector<std::string> methods;
    std::vector<Segment> pattern;
    RouteHandler handler;
    BodyMode body_mode = BodyMode::kBuffered;
  };
  // Fills params and returns true if `route` matches; `score` gets the
  // specificity vector.
  static bool Matches(const Route& route, const std::vector<std::string>& segments,
                      std::vector<std::string>* params, std::vector<int>* score);

  std::vector<Route> routes_;
};

}  // namespace settee
