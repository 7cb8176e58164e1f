// A table with one entry per op kind of the schema (kinds 1..OpKind_MAX; 0 is NONE),
// built from a template that each kind's own file specialises: the op definitions, the
// converter's lowerings and each GPU backend's kernel factories are such tables. No list
// of ops is kept by hand; a kind whose specialisation is missing fails the link, naming it.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "egan_generated.h"

namespace edgegan {

// Entry::at<K> is the table's value for kind K, usually the address of the kind's
// function template specialisation (&op_definition<K>).
template <class Entry>
constexpr auto op_kind_table() {
  return []<size_t... I>(std::index_sequence<I...>) {
    return std::array{Entry::template at<static_cast<schema::OpKind>(I + 1)>...};
  }(std::make_index_sequence<static_cast<size_t>(schema::OpKind_MAX)>{});
}

// Where a kind's entry is in such a table; -1 for NONE and for values past the schema
// (a file's kind is validated on load, so callers treat -1 as an internal error).
constexpr int op_kind_index(schema::OpKind kind) {
  const int k = static_cast<int>(kind);
  return k < 1 || k > static_cast<int>(schema::OpKind_MAX) ? -1 : k - 1;
}

}  // namespace edgegan
