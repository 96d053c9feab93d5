// Drives a running ddp-proxy demo through pgjdbc (Debian's
// libpostgresql-jdbc-java). prepareThreshold=1 makes the driver switch to
// named server-side prepared statements from the second execution on.
// Usage: java -cp postgresql.jar:. JdbcClient HOST PORT
//        java -cp postgresql.jar:. JdbcClient HOST PORT metadata DB SCHEMA TABLE COL:TYPE,...
// The second form checks DatabaseMetaData.getTables/getColumns: TABLE is
// listed in SCHEMA with exactly these columns (pgjdbc TYPE_NAMEs).
import java.sql.*;
import java.util.*;

public class JdbcClient {
    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static void metadata(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[3] + "?sslmode=disable";
        String schema = args[4], table = args[5];
        List<String> want = Arrays.asList(args[6].split(","));
        try (Connection c = DriverManager.getConnection(url, "analyst", "demo")) {
            DatabaseMetaData md = c.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, schema, "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    check(schema.equals(rs.getString("TABLE_SCHEM")), "schema " + rs.getString("TABLE_SCHEM"));
                    tables.add(rs.getString("TABLE_NAME"));
                }
            }
            check(tables.contains(table) && !tables.contains("hidden_t"), "getTables " + tables);
            List<String> got = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, schema, table, "%")) {
                while (rs.next()) {
                    check(rs.getInt("ORDINAL_POSITION") == got.size() + 1, "ordinal " + rs.getInt("ORDINAL_POSITION"));
                    got.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
                }
            }
            check(got.equals(want), "getColumns " + got + ", want " + want);
            // The other metadata calls tools make must run (no statistics:
            // an index's CARDINALITY and PAGES are NULL, read as 0).
            try (ResultSet rs = md.getPrimaryKeys(null, schema, table)) { while (rs.next()) { } }
            try (ResultSet rs = md.getImportedKeys(null, schema, table)) { check(!rs.next(), "foreign keys"); }
            try (ResultSet rs = md.getIndexInfo(null, schema, table, false, true)) {
                while (rs.next()) {
                    check(rs.getLong("CARDINALITY") == 0 && rs.wasNull(), "index cardinality " + rs.getLong("CARDINALITY"));
                }
            }
            boolean int8 = false;
            try (ResultSet rs = md.getTypeInfo()) { while (rs.next()) int8 |= "int8".equals(rs.getString("TYPE_NAME")); }
            check(int8, "getTypeInfo lacks int8");
            System.out.println("jdbc metadata ok " + got);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 2 && args[2].equals("metadata")) {
            metadata(args);
            return;
        }
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/demo?sslmode=disable&prepareThreshold=1";
        try (Connection c = DriverManager.getConnection(url, "analyst", "demo")) {
            try (PreparedStatement ps = c.prepareStatement("SELECT sex, COUNT(*) FROM people WHERE age > ? GROUP BY sex")) {
                for (int age = 30; age < 34; age++) {
                    ps.setInt(1, age);
                    int rows = 0;
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            rows++;
                            check(rs.getLong(2) > 100, "count " + rs.getLong(2));
                        }
                        SQLWarning w = rs.getStatement().getWarnings();
                        check(w != null && w.getMessage().contains("spent"), "no cost notice: " + w);
                    }
                    check(rows == 2, "rows " + rows);
                    ps.clearWarnings();
                }
            }
            try (Statement s = c.createStatement()) {
                try {
                    s.executeQuery("SELECT * FROM people");
                    throw new AssertionError("SELECT * answered");
                } catch (SQLException e) {
                    check("42501".equals(e.getSQLState()), "state " + e.getSQLState());
                }
                try (ResultSet rs = s.executeQuery("SELECT AVG(hours_per_week) FROM people")) {
                    check(rs.next() && rs.getDouble(1) >= 1 && rs.getDouble(1) <= 99, "avg");
                }
            }
            DatabaseMetaData md = c.getMetaData();
            check(md.getDatabaseProductVersion().startsWith("15"), "version " + md.getDatabaseProductVersion());
        }
        // ε from the connection's options property, as a BI tool that
        // cannot run SET would give it.
        try (Connection c = DriverManager.getConnection(url + "&options=-c%20ddp.epsilon=0.5", "analyst", "demo");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM people WHERE age > 40")) {
            check(rs.next(), "count");
            SQLWarning w = s.getWarnings();
            check(w != null && w.getMessage().contains("spent ε = 0.5"), "options ε: " + w);
        }
        System.out.println("jdbc ok");
    }
}
