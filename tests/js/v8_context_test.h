// V8ContextTest: a fixture with a bare isolate and context entered for each
// test (no settee prelude), for the units that convert between V8 values
// and documents (convert, doc_split, doc_encode).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <v8-array-buffer.h>
#include <v8-context.h>
#include <v8-isolate.h>
#include <v8-json.h>
#include <v8-local-handle.h>
#include <v8-script.h>

#include "js/convert.h"
#include "js/v8_init.h"
#include "storage/document.h"

namespace settee::js {

class V8ContextTest : public testing::Test {
 protected:
  void SetUp() override {
    InitializeV8();
    allocator_.reset(v8::ArrayBuffer::Allocator::NewDefaultAllocator());
    v8::Isolate::CreateParams params;
    params.array_buffer_allocator = allocator_.get();
    isolate_ = v8::Isolate::New(params);
    isolate_->Enter();
    scope_.emplace(isolate_);
    context_ = v8::Context::New(isolate_);
    context_->Enter();
  }
  void TearDown() override {
    context_->Exit();
    scope_.reset();
    isolate_->Exit();
    isolate_->Dispose();
  }

  v8::Local<v8::Value> Eval(const std::string& src) {
    v8::Local<v8::Script> script = v8::Script::Compile(context_, ToV8String(isolate_, src)).ToLocalChecked();
    return script->Run(context_).ToLocalChecked();
  }

  // That `doc` and `status`, made from the JS expression `expr`, are what
  // the JSON parser makes of JSON.stringify(expr).
  void ExpectSameAsParsed(const std::string& expr, const IncomingDoc& doc, const Status& status) {
    std::string text = ToUtf8(isolate_, v8::JSON::Stringify(context_, Eval("(" + expr + ")")).ToLocalChecked());
    IncomingDoc parsed;
    Status ps = ParseIncomingDoc(text, {}, SIZE_MAX, &parsed);
    EXPECT_EQ(status.ToString(), ps.ToString());
    EXPECT_EQ(doc.body, parsed.body);
    EXPECT_EQ(doc.id, parsed.id);
    EXPECT_EQ(doc.rev_text, parsed.rev_text);
    EXPECT_EQ(doc.deleted, parsed.deleted);
  }

  std::unique_ptr<v8::ArrayBuffer::Allocator> allocator_;
  v8::Isolate* isolate_ = nullptr;
  std::optional<v8::HandleScope> scope_;
  v8::Local<v8::Context> context_;
};

}  // namespace settee::js
