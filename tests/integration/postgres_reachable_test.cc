// Proves the test environment reaches a real PostgreSQL: create a table, write, query.
#include <libpq-fe.h>

#include <memory>

#include "services_env.h"

namespace telos {
namespace {

using Conn = std::unique_ptr<PGconn, void (*)(PGconn*)>;
using Res = std::unique_ptr<PGresult, void (*)(PGresult*)>;

Res Exec(PGconn* c, const std::string& sql) {
  return Res(PQexec(c, sql.c_str()), PQclear);
}

TEST(PostgresReachable, CreateInsertQuery) {
  Conn conn(PQconnectdb(testing::RequireEnv("TELOS_DATABASE_URL").c_str()), PQfinish);
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  const std::string table = testing::UniqueName("reachable");
  auto created = Exec(conn.get(), "CREATE TABLE " + table + " (id int PRIMARY KEY, name text)");
  ASSERT_EQ(PQresultStatus(created.get()), PGRES_COMMAND_OK) << PQerrorMessage(conn.get());
  auto inserted = Exec(conn.get(), "INSERT INTO " + table + " VALUES (1, 'atrium'), (2, 'arena')");
  ASSERT_EQ(PQresultStatus(inserted.get()), PGRES_COMMAND_OK) << PQerrorMessage(conn.get());
  auto rows = Exec(conn.get(), "SELECT name FROM " + table + " WHERE id = 2");
  ASSERT_EQ(PQresultStatus(rows.get()), PGRES_TUPLES_OK);
  ASSERT_EQ(PQntuples(rows.get()), 1);
  EXPECT_EQ(std::string(PQgetvalue(rows.get(), 0, 0)), "arena");
  auto dropped = Exec(conn.get(), "DROP TABLE " + table);
  EXPECT_EQ(PQresultStatus(dropped.get()), PGRES_COMMAND_OK);
}

}  // namespace
}  // namespace telos
