// Just enough of Erlang's external term format (term_to_binary) to compute
// replication ids the way CouchDB 3 does: couch_replicator_ids hashes
// term_to_binary of a list of tuples, strings, binaries and atoms, so a
// settee replicator and a CouchDB one describing the same replication agree
// on its id (and so on the _local checkpoint documents they share).
//
// Atoms are written as ATOM_EXT (latin-1), as term_to_binary does on the
// OTP releases CouchDB 3 ships with (OTP 26 changed the default to UTF-8
// atoms). Not thread-safe; a plain value builder.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace settee::replication {

class ErlTerm {
 public:
  // The encoded bytes of a whole term (version byte 131 first).
  static std::string Encode(const ErlTerm& term);

  static ErlTerm Atom(std::string_view name);
  static ErlTerm Binary(std::string_view bytes);
  // A string as Erlang lists of bytes are encoded ("" is the empty list).
  static ErlTerm String(std::string_view chars);
  static ErlTerm Integer(int64_t value);
  static ErlTerm Float(double value);  // NEW_FLOAT_EXT, as OTP 17+ writes
  static ErlTerm Nil();
  // Start a tuple or list; add elements with Add(), in order.
  static ErlTerm Tuple();
  static ErlTerm List();

  ErlTerm& Add(const ErlTerm& element);
  const std::string& bytes() const { return bytes_; }

 private:
  enum class Kind { kScalar, kTuple, kList };
  Kind kind_ = Kind::kScalar;
  uint32_t arity_ = 0;
  std::string bytes_;  // scalar: its encoding; tuple/list: the elements'
};

}  // namespace settee::replication
