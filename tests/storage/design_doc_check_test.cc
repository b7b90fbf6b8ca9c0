// design::CheckFields / FunctionsToCompile (storage/design_doc_check.h)
// against CouchDB's couch_mrview:validate, case by case.
#include "storage/design_doc_check.h"

#include <gtest/gtest.h>

namespace settee::design {
namespace {

Status Check(const char* body) {
  json::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return CheckFields(d);
}

TEST(DesignDocCheckTest, FieldsOfTheWrongTypeAreRefusedWithCouchDBsReason) {
  struct Case {
    const char* body;
    const char* reason;  // "" = accepted
  } cases[] = {
      {R"({})", ""},
      {R"({"anything":5,"views":{}})", ""},
      {R"({"language":"javascript","views":{"v":{"map":"function (doc) {}","reduce":"_sum"}}})", ""},
      {R"({"views":{"lib":{"m":"exports.x = 1"},"v":{"map":"f"}}})", ""},
      {R"({"filters":{"f":"function () {}","g":{"nested":"ok"}}})", ""},
      {R"({"rewrites":[]})", ""},
      {R"({"rewrites":"function (req) {}"})", ""},
      {R"({"options":{"local_seq":true,"include_design":false,"partitioned":false,"other":1}})", ""},
      {R"({"language":"query","views":{"v":{"map":{"fields":{"a":"asc"}},"reduce":"_count"}}})", ""},
      {R"({"language":5})", "`language` field must have string type"},
      {R"({"language":null})", "`language` field must have string type"},
      {R"({"filters":[]})", "`filters` field must have object type"},
      {R"({"filters":{"f":3}})", "`filters.f` field must have object or string type"},
      {R"({"lists":{"l":true}})", "`lists.l` field must have object or string type"},
      {R"({"options":[]})", "`options` field must have object type"},
      {R"({"options":{"local_seq":"yes"}})", "`options.local_seq` field must have boolean type"},
      {R"({"rewrites":{}})", "`rewrites` field must have string or array type"},
      {R"({"shows":{"s":1}})", "`shows.s` field must have object or string type"},
      {R"({"updates":"u"})", "`updates` field must have object type"},
      {R"({"validate_doc_update":{}})", "`validate_doc_update` field must have string type"},
      {R"({"views":5})", "`views` field must have object type"},
      {R"({"views":{"lib":"x"}})", "`views.lib` field must have object type"},
      {R"({"views":{"v":[]}})", "`views.v` field must have object type"},
      {R"({"views":{"v":{"map":3}}})", "`views.v.map` field must have string type"},
      {R"({"language":"query","views":{"v":{"map":"f"}}})", "`views.v.map` field must have object type"},
      {R"({"views":{"v":{"map":"f","reduce":null}}})", "`views.v.reduce` field must have string type"},
      {R"({"views":{"v":{"reduce":"_sum"}}})", "View `v` must contain map function"},
      {R"({"views":{"v":{"map":"f","reduce":"_bogus"}}})", "`_bogus` is not a supported reduce function."},
      {R"({"views":{"v":{"map":"f","reduce":"_sum_of_anything"}}})", ""},  // matched by prefix
      // The first rule that fails decides (filters before views).
      {R"({"views":{"v":{"map":3}},"filters":5})", "`filters` field must have object type"},
  };
  for (const Case& c : cases) {
    Status s = Check(c.body);
    if (*c.reason == '\0') {
      EXPECT_TRUE(s.ok()) << c.body << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), Status::Code::kInvalidDesignDoc) << c.body;
      EXPECT_EQ(s.reason(), c.reason) << c.body;
    }
  }
}

TEST(DesignDocCheckTest, JavaScriptMapsThenReducesAreCompiled) {
  json::Document d;
  ASSERT_TRUE(json::Parse(R"({"views":{"lib":{"m":"x"},"a":{"map":"ma","reduce":"ra"},)"
                          R"("b":{"map":"mb","reduce":"_count"}}})",
                          &d).ok());
  auto fns = FunctionsToCompile(d);
  ASSERT_EQ(fns.size(), 3u);
  EXPECT_EQ(fns[0].kind + " " + fns[0].view + " " + fns[0].source, "map a ma");
  EXPECT_EQ(fns[1].kind + " " + fns[1].view + " " + fns[1].source, "map b mb");
  EXPECT_EQ(fns[2].kind + " " + fns[2].view + " " + fns[2].source, "reduce a ra");
  EXPECT_EQ(CompilationError(fns[2], "oops").reason(),
            "Compilation of the reduce function in the 'a' view failed: oops");
  for (const char* other : {R"({"language":"query","views":{"a":{"map":{}}}})",
                            R"({"language":"python","views":{"a":{"map":"def f(): pass"}}})"}) {
    ASSERT_TRUE(json::Parse(other, &d).ok());
    EXPECT_TRUE(FunctionsToCompile(d).empty()) << other;
  }
}

}  // namespace
}  // namespace settee::design
