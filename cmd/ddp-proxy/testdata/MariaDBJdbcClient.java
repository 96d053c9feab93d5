import java.sql.*;

/** Drives a running ddp-proxy demo's MySQL front end with MariaDB
 *  Connector/J (Debian's libmariadb-java). Usage: MariaDBJdbcClient HOST PORT */
public class MariaDBJdbcClient {
    public static void main(String[] args) throws Exception {
        for (String mode : new String[] {"useServerPrepStmts=false", "useServerPrepStmts=true"}) {
            String url = "jdbc:mariadb://" + args[0] + ":" + args[1] + "/demo?user=analyst&password=demo&" + mode;
            try (Connection c = DriverManager.getConnection(url)) {
                try (Statement s = c.createStatement()) {
                    s.execute("SET @ddp_epsilon = 0.5");
                }
                try (PreparedStatement p = c.prepareStatement("SELECT sex, COUNT(*) FROM people WHERE age > ? GROUP BY sex")) {
                    p.setInt(1, mode.endsWith("true") ? 30 : 31);
                    try (ResultSet r = p.executeQuery()) {
                        int n = 0;
                        while (r.next()) {
                            if (r.getLong(2) < 0) throw new RuntimeException("negative count");
                            n++;
                        }
                        if (n != 2) throw new RuntimeException("groups: " + n);
                    }
                    SQLWarning w = p.getWarnings();
                    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SHOW WARNINGS")) {
                        if (!r.next() || !r.getString(3).contains("spent")) throw new RuntimeException("no cost warning");
                    }
                }
                try (Statement s = c.createStatement()) {
                    s.executeQuery("SELECT * FROM people");
                    throw new RuntimeException("SELECT * was answered");
                } catch (SQLException e) {
                    if (e.getErrorCode() != 1142 || !"42000".equals(e.getSQLState()))
                        throw new RuntimeException("refusal: " + e.getErrorCode() + " " + e.getSQLState(), e);
                }
                // Schema browsing as BI tools do it: information_schema,
                // answered from the policy on the demo's SQLite backend.
                DatabaseMetaData md = c.getMetaData();
                boolean found = false;
                try (ResultSet r = md.getTables("demo", null, "%", null)) {
                    while (r.next()) found |= "people".equals(r.getString("TABLE_NAME"));
                }
                int cols = 0;
                try (ResultSet r = md.getColumns("demo", null, "people", "%")) {
                    while (r.next()) {
                        if ("age".equals(r.getString("COLUMN_NAME")) && r.getInt("DATA_TYPE") != Types.BIGINT)
                            throw new RuntimeException("age is JDBC type " + r.getInt("DATA_TYPE"));
                        cols++;
                    }
                }
                if (cols != 14) throw new RuntimeException("people has " + cols + " columns");
                if (!found) throw new RuntimeException("people not listed");
                // The rest of DatabaseMetaData a BI tool's schema browser
                // calls: keys and indexes (none exposed for a private
                // table; the calls must work), the type list.
                try (ResultSet r = md.getPrimaryKeys("demo", null, "people")) { while (r.next()) { } }
                try (ResultSet r = md.getIndexInfo("demo", null, "people", false, true)) { while (r.next()) { } }
                try (ResultSet r = md.getImportedKeys("demo", null, "checkins")) { while (r.next()) { } }
                boolean bigint = false;
                try (ResultSet r = md.getTypeInfo()) {
                    while (r.next()) bigint |= "BIGINT".equalsIgnoreCase(r.getString("TYPE_NAME"));
                }
                if (!bigint) throw new RuntimeException("getTypeInfo lacks BIGINT");
                System.out.println("mariadb jdbc ok " + mode + " (" + md.getDatabaseProductVersion() + ")");
            }
        }
    }
}
