// A SQLite VFS over the default one whose main database files end at their last whole page:
// a file cut off mid-page (a copy stopped halfway) shows no partial last page. SQLite would
// read that page with its missing part as zeros, and the cells emptied so read back as rows
// of NULLs (rowid 0); a page past the end is instead damage SQLite reports where a table meets
// it. Everything else is the default VFS's. For read-only connections.
#pragma once

namespace syncopate::trace::detail {

// Its name for sqlite3_open_v2, registered on first use; nullptr if it could not be.
const char* wholePagesVfs() noexcept;

}  // namespace syncopate::trace::detail
