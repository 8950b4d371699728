// libpq: the sightings index shared by the nodes of a site, in PostgreSQL.
#include <libpq-fe.h>
