#include "storage/collation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "util/json.h"

namespace settee::collation {
namespace {

int Sign(int v) { return (v > 0) - (v < 0); }

json::Document ParseOrDie(std::string_view text) {
  json::Document d;
  Status s = json::Parse(text, &d);
  EXPECT_TRUE(s.ok()) << s.ToString() << " in " << text;
  return d;
}

// Checks that `values` is strictly increasing under cmp, for every pair both
// ways, and that the index-key encoding agrees.
template <typename Cmp, typename Enc>
void ExpectStrictlyIncreasing(const json::Value& values, Cmp cmp, Enc enc) {
  ASSERT_TRUE(values.IsArray());
  std::vector<std::string> keys;
  for (const auto& v : values.GetArray()) keys.push_back(enc(v));
  const auto n = values.Size();
  for (rapidjson::SizeType i = 0; i < n; i++) {
    EXPECT_EQ(0, cmp(values[i], values[i])) << json::Serialize(values[i]);
    for (rapidjson::SizeType j = i + 1; j < n; j++) {
      EXPECT_LT(cmp(values[i], values[j]), 0)
          << json::Serialize(values[i]) << " vs " << json::Serialize(values[j]);
      EXPECT_GT(cmp(values[j], values[i]), 0)
          << json::Serialize(values[j]) << " vs " << json::Serialize(values[i]);
      EXPECT_LT(keys[i], keys[j])
          << "encoding: " << json::Serialize(values[i]) << " vs " << json::Serialize(values[j]);
    }
  }
}

// The ordering table of CouchDB's ddocs/views/collation.rst ("Collation
// Specification"), plus negative/fractional numbers and the UCA examples the
// same page states (key ranges, \ufff0 as a high sentinel).
constexpr std::string_view kSpecTable = R"([
  null, false, true,
  -1e300, -10, -1.5, -0.25, 0, 0.5, 1, 2, 3.0, 4, 1e10, 1.7976931348623157e308,
  "", "a", "A", "aa",
  "abc", "Abc", "ABC", "abc1", "AbcZZZZZ", "abc\ufff0",
  "b", "B", "ba", "bb",
  "\u00e9", "\u00c9", "f", "z", "Z",
  "\u03b1", "\u044f", "\u4e2d", "\uffff",
  [], ["a"], ["b"], ["b","c"], ["b","c","a"], ["b","d"], ["b","d","e"],
  {}, {"a":1}, {"a":2}, {"b":1}, {"b":2}, {"b":2,"a":1}, {"b":2,"c":2}
])";

TEST(CollationTest, SpecTable) {
  json::Document d = ParseOrDie(kSpecTable);
  ExpectStrictlyIncreasing(d, Compare, EncodeIndexKey);
}

// collation.rst: "the collation sequence for 7-bit ASCII characters". The
// page predates a UCA/CLDR root change: there ` and ^ sort first, while
// current ICU (and so CouchDB built on it) sorts them after %. Everything
// else is verbatim.
TEST(CollationTest, AsciiSequenceFromSpec) {
  const std::string seq =
      "_ - , ; : ! ? . ' \" ( ) [ ] { } @ * / \\ & # % ` ^ + < = > | ~ $ 0 1 2 3 4 5 6 7 8 9 "
      "a A b B c C d D e E f F g G h H i I j J k K l L m M n N o O p P q Q r R s S t T u U v V "
      "w W x X y Y z Z";
  json::Document d;
  d.SetArray();
  for (size_t i = 0; i < seq.size(); i += 2) {
    d.PushBack(json::StringValue(seq.substr(i, 1), d.GetAllocator()), d.GetAllocator());
  }
  ASSERT_EQ(d.Size(), 94u);
  ExpectStrictlyIncreasing(d, Compare, EncodeIndexKey);
}

TEST(CollationTest, RawOrderDiffersFromIcu) {
  EXPECT_LT(CompareStrings("a", "B"), 0);
  EXPECT_GT(CompareRawStrings("a", "B"), 0);
  EXPECT_LT(CompareStrings("a", "A"), 0);
  EXPECT_GT(CompareRawStrings("a", "A"), 0);
  EXPECT_LT(CompareStrings("~", "0"), 0);  // symbols before digits in UCA
  EXPECT_GT(CompareRawStrings("~", "0"), 0);

  json::Document a = ParseOrDie(R"(["a"])"), b = ParseOrDie(R"(["B"])");
  EXPECT_LT(Compare(a, b), 0);
  EXPECT_GT(CompareRaw(a, b), 0);
  EXPECT_LT(EncodeIndexKey(a), EncodeIndexKey(b));
  EXPECT_GT(EncodeRawIndexKey(a), EncodeRawIndexKey(b));

  // Raw keeps the JSON type order (see collation.h).
  json::Document raw = ParseOrDie(R"([null, false, true, -1, 2, "B", "Z", "a", "b", ["B"], ["a"],
                                      {"B":1}, {"a":1}])");
  ExpectStrictlyIncreasing(raw, CompareRaw, EncodeRawIndexKey);
}

TEST(CollationTest, CodePointTieBreak) {
  // ICU root says these are equal (canonical equivalence; U+0000 is
  // ignorable); CouchDB would treat them as one key. Settee tie-breaks by
  // code point so distinct strings are never equal.
  const std::string nfc = "\xC3\xA9";   // U+00E9
  const std::string nfd = "e\xCC\x81";  // e + U+0301
  EXPECT_EQ(0, TEST_CompareStringsIcuOnly(nfc, nfc));
  EXPECT_LT(CompareStrings(nfd, nfc), 0);
  EXPECT_GT(CompareStrings(nfc, nfd), 0);
  const std::string a0("a\0", 2);
  EXPECT_LT(CompareStrings("a", a0), 0);
  EXPECT_GT(CompareStrings(a0, "a"), 0);
  EXPECT_LT(CompareStrings(a0, "b"), 0);  // the tie-break never overrides ICU
  EXPECT_LT(CompareStrings(a0, "A"), 0);

  json::Document d;
  d.SetArray();
  for (const std::string& s : {std::string("a"), a0, nfd, nfc}) {
    d.PushBack(json::StringValue(s, d.GetAllocator()), d.GetAllocator());
  }
  EXPECT_NE(EncodeIndexKey(d[2]), EncodeIndexKey(d[3]));
  EXPECT_LT(EncodeIndexKey(d[2]), EncodeIndexKey(d[3]));
  EXPECT_LT(EncodeIndexKey(d[0]), EncodeIndexKey(d[1]));
}

// Strings not built by json::Parse may hold ill-formed UTF-8: ICU reads it as
// U+FFFD in both Compare and the sort key, and the byte tie-break keeps the
// order total.
TEST(CollationTest, IllFormedUtf8IsOrderedConsistently) {
  const std::vector<std::string> raw = {
      "\xFF", "\xC3", "a\xC3", "\xED\xA0\x80", "\xEF\xBF\xBD", "\xF4\x90\x80\x80",
      "\xC0\xAF", "a", "\xE4\xB8", "\xE4\xB8\xAD", "\xFF\xFF", "z\x80z", "\x80"};
  json::Document d;
  d.SetArray();
  for (const auto& s : raw) d.PushBack(json::StringValue(s, d.GetAllocator()), d.GetAllocator());
  for (const auto& a : d.GetArray()) {
    for (const auto& b : d.GetArray()) {
      const int c = Compare(a, b);
      EXPECT_EQ(-c, Compare(b, a));
      EXPECT_EQ(Sign(c), Sign(EncodeIndexKey(a).compare(EncodeIndexKey(b))))
          << json::Quote(json::View(a)) << " vs " << json::Quote(json::View(b));
      EXPECT_EQ(c == 0, json::View(a) == json::View(b));
    }
  }
}

TEST(CollationTest, Numbers) {
  json::Document d;
  d.SetArray();
  auto& al = d.GetAllocator();
  const double inf = std::numeric_limits<double>::infinity();
  for (double x : {-inf, -1.7976931348623157e308, -1e10, -1.0, -5e-324, 0.0, 5e-324,
                   2.2250738585072014e-308, 1.0, 1.5, 9007199254740992.0, 1e300, inf,
                   std::numeric_limits<double>::quiet_NaN()}) {
    d.PushBack(json::Value(x), al);
  }
  ExpectStrictlyIncreasing(d, Compare, EncodeIndexKey);

  json::Value neg_zero(-0.0), zero(0), one_int(1), one_double(1.0), big(int64_t{1} << 40),
      big_double(std::ldexp(1.0, 40)), u64(uint64_t{1} << 63), u64_double(std::ldexp(1.0, 63));
  EXPECT_EQ(0, Compare(neg_zero, zero));
  EXPECT_EQ(EncodeIndexKey(neg_zero), EncodeIndexKey(zero));
  EXPECT_EQ(0, Compare(one_int, one_double));
  EXPECT_EQ(EncodeIndexKey(one_int), EncodeIndexKey(one_double));
  EXPECT_EQ(0, Compare(big, big_double));
  EXPECT_EQ(0, Compare(u64, u64_double));
  EXPECT_EQ(EncodeIndexKey(u64), EncodeIndexKey(u64_double));
  json::Value nan1(std::numeric_limits<double>::quiet_NaN()), nan2(-std::nan("7"));
  EXPECT_EQ(0, Compare(nan1, nan2));
  EXPECT_EQ(EncodeIndexKey(nan1), EncodeIndexKey(nan2));
}

TEST(CollationTest, ObjectMemberOrderMatters) {
  json::Document ba = ParseOrDie(R"({"b":2,"a":1})"), ab = ParseOrDie(R"({"a":1,"b":2})");
  EXPECT_GT(Compare(ba, ab), 0);
  EXPECT_NE(EncodeIndexKey(ba), EncodeIndexKey(ab));
  json::Document k1 = ParseOrDie(R"({"a":{"x":1}})"), k2 = ParseOrDie(R"({"A":0})");
  EXPECT_LT(Compare(k1, k2), 0);  // keys compared first, by ICU
  EXPECT_LT(EncodeIndexKey(k1), EncodeIndexKey(k2));
}

TEST(CollationTest, DeepNestingDoesNotCrash) {
  auto deep = [](json::Document* d, int leaf) {
    d->SetArray();
    json::Value* cur = d;
    for (int i = 0; i < kMaxDepth + 20; i++) {
      cur->PushBack(json::Value(rapidjson::kArrayType), d->GetAllocator());
      cur = &(*cur)[0];
    }
    cur->PushBack(json::Value(leaf), d->GetAllocator());
  };
  json::Document a, b, shallow = ParseOrDie("[[1]]");
  deep(&a, 1);
  deep(&b, 2);
  // Beyond kMaxDepth nothing is looked at, consistently in both functions.
  EXPECT_EQ(0, Compare(a, b));
  EXPECT_EQ(EncodeIndexKey(a), EncodeIndexKey(b));
  EXPECT_GT(Compare(a, shallow), 0);
  EXPECT_GT(EncodeIndexKey(a), EncodeIndexKey(shallow));
}

// ---------------------------------------------------------------------------
// Randomized agreement between Compare() and the encodings.

class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  json::Value Value(json::Allocator& al, int depth) {
    switch (Pick(depth < 3 ? 7 : 5)) {
      case 0: return json::Value();
      case 1: return json::Value(Pick(2) == 0);
      case 2:
      case 3: return Number();
      case 4: return json::StringValue(String(), al);
      case 5: {
        json::Value a(rapidjson::kArrayType);
        for (int i = Pick(4); i > 0; i--) a.PushBack(Value(al, depth + 1), al);
        return a;
      }
      default: {
        json::Value o(rapidjson::kObjectType);
        for (int i = Pick(4); i > 0; i--) {
          o.AddMember(json::StringValue(String(), al), Value(al, depth + 1), al);
        }
        return o;
      }
    }
  }

  std::string String() {
    // Small alphabet so that prefixes, case pairs and ICU ties are common.
    static const char* const kPieces[] = {
        "a", "A", "b", "B", "z", "0", "9", " ", "-", "~", "_", "\t", "\n",
        "\0", "\x01", "\x7f",
        "\xC3\xA9",          // é (NFC)
        "e\xCC\x81",         // e + combining acute (NFD)
        "\xC3\x9F", "ss",    // ß
        "\xE4\xB8\xAD",      // 中
        "\xF0\x9D\x84\x9E",  // U+1D11E (outside the BMP)
        "\xEF\xBF\xBF",      // U+FFFF
        "\xEF\xBF\xB0",      // U+FFF0
        "\xCE\xB1",          // α
    };
    static const size_t kLens[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                   2, 3, 2, 2, 3, 4, 3, 3, 2};
    constexpr int kN = sizeof(kPieces) / sizeof(kPieces[0]);
    std::string s;
    for (int i = Pick(5); i > 0; i--) {
      const int p = Pick(kN);
      s.append(kPieces[p], kLens[p]);
    }
    return s;
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  json::Value Number() {
    switch (Pick(8)) {
      case 0: return json::Value(Pick(5) - 2);
      case 1: return json::Value(Pick(2) ? -0.0 : 0.0);
      case 2: return json::Value((Pick(2) ? -1 : 1) * 1.7976931348623157e308);
      case 3: return json::Value((Pick(2) ? -1 : 1) * 4.9406564584124654e-324);
      case 4: return json::Value(static_cast<int64_t>(rng_()) << 20);
      case 5: return json::Value(static_cast<double>(Pick(5) - 2));  // equal to case 0
      case 6: return json::Value(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_));
      default:
        return json::Value(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng_),
                                      Pick(2000) - 1000));
    }
  }

  std::mt19937 rng_;
};

template <typename Cmp, typename Enc>
void CheckRandomAgreement(Cmp cmp, Enc enc, uint32_t seed) {
  RandomJson gen(seed);
  json::Document d;
  d.SetArray();
  constexpr int kCount = 3000;
  for (int i = 0; i < kCount; i++) d.PushBack(gen.Value(d.GetAllocator(), 0), d.GetAllocator());

  std::vector<std::pair<std::string, int>> keyed;
  for (int i = 0; i < kCount; i++) keyed.emplace_back(enc(d[i]), i);
  std::stable_sort(keyed.begin(), keyed.end());

  // Sorted by encoding, neighbours must be ordered by cmp the same way.
  int equal_neighbours = 0;
  for (int i = 0; i + 1 < kCount; i++) {
    const json::Value& a = d[keyed[i].second];
    const json::Value& b = d[keyed[i + 1].second];
    const int c = cmp(a, b);
    if (keyed[i].first == keyed[i + 1].first) {
      equal_neighbours++;
      EXPECT_EQ(0, c) << json::Serialize(a) << " vs " << json::Serialize(b);
    } else {
      EXPECT_LT(c, 0) << json::Serialize(a) << " vs " << json::Serialize(b);
    }
  }
  EXPECT_GT(equal_neighbours, 0);  // the generator does produce equal keys

  // Random pairs: sign agreement, antisymmetry, and the prefix property with
  // doc ids appended.
  const std::string docids[] = {"", std::string("\0", 1), "\x01", "zz", "\xFF\xFF"};
  for (int n = 0; n < 20000; n++) {
    const int i = gen.Pick(kCount), j = gen.Pick(kCount);
    const int c = cmp(d[i], d[j]);
    ASSERT_EQ(-c, cmp(d[j], d[i])) << json::Serialize(d[i]) << " vs " << json::Serialize(d[j]);
    const std::string ei = enc(d[i]), ej = enc(d[j]);
    ASSERT_EQ(Sign(c), Sign(ei.compare(ej)))
        << json::Serialize(d[i]) << " vs " << json::Serialize(d[j]);
    const std::string& x = docids[gen.Pick(5)];
    const std::string& y = docids[gen.Pick(5)];
    const int with_ids = Sign((ei + x).compare(ej + y));
    if (c != 0) {
      ASSERT_EQ(Sign(c), with_ids) << json::Serialize(d[i]) << " vs " << json::Serialize(d[j]);
    } else {
      ASSERT_EQ(Sign(x.compare(y)), with_ids);
    }
  }
}

TEST(CollationTest, RandomValuesEncodingAgreesWithCompare) {
  CheckRandomAgreement(Compare, EncodeIndexKey, 1);
  CheckRandomAgreement(Compare, EncodeIndexKey, 2);
}

TEST(CollationTest, RandomValuesRawEncodingAgreesWithCompareRaw) {
  CheckRandomAgreement(CompareRaw, EncodeRawIndexKey, 3);
}

TEST(CollationTest, AppendMatchesEncode) {
  json::Document d = ParseOrDie(kSpecTable);
  for (const auto& v : d.GetArray()) {
    std::string out = "prefix";
    AppendIndexKey(v, &out);
    EXPECT_EQ("prefix" + EncodeIndexKey(v), out);
    out = "p";
    AppendRawIndexKey(v, &out);
    EXPECT_EQ("p" + EncodeRawIndexKey(v), out);
  }
}

// ---------------------------------------------------------------------------
// The ASCII fast path must be exactly ICU's order.

TEST(CollationTest, AsciiFastPathMatchesIcuOnShortStrings) {
  EXPECT_TRUE(TEST_AsciiFastPathEnabled()) << "ICU's root order changed; fast path disabled";
  std::vector<std::string> all;
  all.emplace_back();
  for (int c = 0; c < 128; c++) all.emplace_back(1, static_cast<char>(c));
  for (int c = 0; c < 128; c++) {
    for (int e = 0; e < 128; e++) {
      std::string s;
      s.push_back(static_cast<char>(c));
      s.push_back(static_cast<char>(e));
      all.push_back(s);
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
    return TEST_CompareStringsIcuOnly(a, b) < 0;
  });
  for (size_t i = 0; i + 1 < all.size(); i++) {
    ASSERT_LT(CompareStrings(all[i], all[i + 1]), 0)
        << json::Quote(all[i]) << " vs " << json::Quote(all[i + 1]);
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
  for (int n = 0; n < 200000; n++) {
    const std::string& a = all[pick(rng)];
    const std::string& b = all[pick(rng)];
    ASSERT_EQ(TEST_CompareStringsIcuOnly(a, b), CompareStrings(a, b))
        << json::Quote(a) << " vs " << json::Quote(b);
  }
}

TEST(CollationTest, AsciiFastPathMatchesIcuOnRandomStrings) {
  std::mt19937 rng(11);
  const std::string alphabet = "aAbBzZ09 -_~.\t\n\x01\x7f";
  auto gen = [&] {
    std::string s;
    for (int i = std::uniform_int_distribution<int>(0, 8)(rng); i > 0; i--) {
      s.push_back(alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)]);
    }
    return s;
  };
  for (int n = 0; n < 200000; n++) {
    const std::string a = gen(), b = gen();
    ASSERT_EQ(TEST_CompareStringsIcuOnly(a, b), CompareStrings(a, b))
        << json::Quote(a) << " vs " << json::Quote(b);
  }
}

TEST(CollationTest, ConcurrentUseGivesSameResults) {
  RandomJson gen(5);
  json::Document d;
  d.SetArray();
  for (int i = 0; i < 500; i++) d.PushBack(gen.Value(d.GetAllocator(), 0), d.GetAllocator());
  std::vector<int> expected;
  for (int i = 0; i + 1 < 500; i++) expected.push_back(Compare(d[i], d[i + 1]));

  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; round++) {
        for (int i = 0; i + 1 < 500; i++) {
          if (Compare(d[i], d[i + 1]) != expected[i]) mismatches[t]++;
          if (Sign(EncodeIndexKey(d[i]).compare(EncodeIndexKey(d[i + 1]))) != Sign(expected[i])) {
            mismatches[t]++;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; t++) EXPECT_EQ(0, mismatches[t]) << "thread " << t;
}

TEST(CollationTest, IcuVersionIsReported) {
  const std::string v = IcuCollatorVersion();
  EXPECT_NE("none", v);
  EXPECT_NE(std::string::npos, v.find('.'));
}

}  // namespace
}  // namespace settee::collation
