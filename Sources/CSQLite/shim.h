// SQLite 3: the sightings index's embedded store (one file, WAL).
#include <sqlite3.h>
