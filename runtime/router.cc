#include "runtime/router.h"

#include "runtime/http_message.h"

namespace settee {

bool SplitPath(std::string_view raw_path, std::vector<std::string>* segments) {
  segments->clear();
  size_t pos = 0;
  while (pos <= raw_path.size()) {
    size_t slash = raw_path.find('/', pos);
    if (slash == std::string_view::npos) slash = raw_path.size();
    std::string_view seg = raw_path.substr(pos, slash - pos);
    if (!seg.empty()) {
      std::string decoded;
      if (!http::PercentDecode(seg, &decoded, false)) return false;
      segments->push_back(std::move(decoded));
    }
    pos = slash + 1;
  }
  return true;
}

void Router::Add(std::string_view methods, std::string_view pattern, RouteHandler handler,
                 BodyMode body_mode) {
  Route r;
  r.body_mode = body_mode;
  size_t pos = 0;
  while (pos <= methods.size()) {
    size_t comma = methods.find(',', pos);
    if (comma == std::string_view::npos) comma = methods.size();
    if (comma > pos) r.methods.emplace_back(methods.substr(pos, comma - pos));
    pos = comma + 1;
  }
  pos = 0;
  while (pos <= pattern.size()) {
    size_t slash = pattern.find('/', pos);
    if (slash == std::string_view::npos) slash = pattern.size();
    std::string_view seg = pattern.substr(pos, slash - pos);
    if (!seg.empty()) {
      if (seg.size() > 3 && seg.substr(0, 2) == "{*" && seg.back() == '}') {
        r.pattern.push_back({Segment::kRest, std::string(seg.substr(2, seg.size() - 3))});
      } else if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
        r.pattern.push_back({Segment::kParam, std::string(seg.substr(1, seg.size() - 2))});
      } else {
        r.pattern.push_back({Segment::kLiteral, std::string(seg)});
      }
    }
    pos = slash + 1;
  }
  r.handler = std::move(handler);
  routes_.push_back(std::move(r));
}

bool Router::Matches(const Route& route, const std::vector<std::string>& segments,
                     std::vector<std::string>* params, std::vector<int>* score) {
  // Every request is matched against every route: turn away those of
  // another length before copying any parameter.
  const bool rest = !route.pattern.empty() && route.pattern.back().kind == Segment::kRest;
  if (rest ? segments.size() < route.pattern.size() : segments.size() != route.pattern.size()) return false;
  params->clear();
  score->clear();
  size_t i = 0;
  for (const Segment& seg : route.pattern) {
    if (seg.kind == Segment::kRest) {
      std::string rest = segments[i];
      for (size_t j = i + 1; j < segments.size(); ++j) rest += "/" + segments[j];
      params->push_back(std::move(rest));
      score->push_back(Segment::kRest);
      return true;
    }
    if (seg.kind == Segment::kLiteral) {
      if (segments[i] != seg.text) return false;
    } else {
      params->push_back(segments[i]);
    }
    score->push_back(seg.kind);
    ++i;
  }
  return true;  // the lengths agree (checked above)
}

Router::Outcome Router::Find(std::string_view method, const std::vector<std::string>& segments,
                             Match* match) const {
  std::vector<int> best_score;
  std::vector<const Route*> best;  // all routes sharing the best score
  std::vector<std::string> params, best_params;
  std::vector<int> score;
  for (const Route& r : routes_) {
    if (!Matches(r, segments, &params, &score)) continue;
    if (best.empty() || score > best_score) {
      best.assign(1, &r);
      best_score = score;
      best_params = params;
    } else if (score == best_score) {
      best.push_back(&r);
    }
  }
  if (best.empty()) return Outcome::kNotFound;
  match->params = std::move(best_params);
  match->allowed.clear();
  for (const Route* r : best) {
    for (const std::string& m : r->methods) {
      if (m == method) {
        match->handler = &r->handler;
        match->body_mode = r->body_mode;
        return Outcome::kFound;
      }
    }
  }
  for (const Route* r : best) {
    for (const std::string& m : r->methods) {
      if (!match->allowed.empty()) match->allowed += ",";
      match->allowed += m;
    }
  }
  return Outcome::kMethodNotAllowed;
}

}  // namespace settee
