// How Erlang's io_lib:format("~p", [X]) writes a string (a list of bytes),
// a binary or a float: CouchDB puts such text into error reasons (the
// query-string parser's "Invalid boolean parameter: ~p"), and clients see it
// verbatim.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace settee::erlang {

// ~p of a list of bytes, as mochiweb hands CouchDB a decoded query-string
// value: "..." with \" \\ \n \r \t \v \b \f \e escaped when every byte is
// printable Latin-1 (or one of those escapes); [] when empty; otherwise the
// byte values, [104,105,1]. Bytes 160-255 are printable and are written as
// they are, so UTF-8 text whose bytes all lie there (é, 中) reads as itself.
std::string ListText(std::string_view bytes);

// ~p of a binary: <<"...">> under the same rule, <<>> when empty, else
// <<104,105,1>>.
std::string BinaryText(std::string_view bytes);

// ~p of a float: the shortest digits that read back as `value`, placed as
// io_lib_format:fwrite_g places them, with a decimal point or an exponent,
// whichever is shorter: 1.5, 100.0, 1.0e3, 0.0001, 1.0e-5.
std::string FloatText(double value);

// Erlang's list_to_integer(Text), as CouchDB reads a query-string count:
// an optional sign, then one or more decimal digits and nothing else. False
// when `text` is no integer; else *negative says whether it had a '-' ("-0"
// too) and *magnitude gets its absolute value, the largest uint64 when it
// is larger.
bool ListToInteger(std::string_view text, bool* negative, uint64_t* magnitude);

}  // namespace settee::erlang
