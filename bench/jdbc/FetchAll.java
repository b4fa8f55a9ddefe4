// The benchmark's JVM client for HiveServer2 fetches (bench/targets/jdbc.py).
//
// A long-lived process: the JVM starts once per target, so its start-up and
// the driver's class loading are never timed. It reads one command per line on
// stdin and answers each with one line on stdout (fields separated by tabs):
//
//   OPEN <fetch size> <JDBC URL> [<user>]  ->  OK <connection id>
//   EXEC <connection id> <SQL>             ->  OK <rows> <nanoseconds> <checksum>
//   CLOSE <connection id>                  ->  OK
//   QUIT (or end of input)                 ->  the process exits
//
// Any failure answers "ERR <message>". In SQL and messages, backslash, tab,
// newline and carriage return travel as \\, \t, \n and \r.
//
// EXEC is what a JDBC application does with a result: execute, read every
// column of every row with getObject (the driver builds its Java object:
// Timestamp, BigDecimal, String, ...), close the statement. The values are
// folded into a checksum that is printed, so the JIT cannot drop the reads.
//
// One change to the driver's behaviour: Hive JDBC 2.3's ResultSet.next() calls
// HiveStatement.waitForOperationToComplete() before every row, and that sends
// a GetOperationStatus RPC each time (a do-while), so a plain 2.3 client makes
// one round trip per row and measures the RPC latency, not the fetch. Each
// connection's Thrift client is wrapped (reflection on HiveConnection.client)
// so that once an operation is FINISHED, its status is answered from the last
// response without a round trip; every other call, FetchResults included,
// goes to the server unchanged.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.apache.hive.service.rpc.thrift.TCLIService;
import org.apache.hive.service.rpc.thrift.TGetOperationStatusReq;
import org.apache.hive.service.rpc.thrift.TGetOperationStatusResp;
import org.apache.hive.service.rpc.thrift.TOperationHandle;
import org.apache.hive.service.rpc.thrift.TOperationState;

public final class FetchAll {
    private static final Map<Integer, Connection> CONNECTIONS = new HashMap<>();
    private static final Map<Integer, Integer> FETCH_SIZES = new HashMap<>();
    private static int nextId = 1;

    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hive.jdbc.HiveDriver");
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out =
                new PrintWriter(
                        new BufferedWriter(
                                new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        out.println("READY\t" + System.getProperty("java.version"));
        out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            if (line.equals("QUIT")) {
                break;
            }
            String answer;
            try {
                answer = handle(line.split("\t", -1));
            } catch (Throwable t) {
                answer = "ERR\t" + escape(describe(t));
            }
            out.println(answer);
            out.flush();
        }
        for (Connection c : CONNECTIONS.values()) {
            try {
                c.close();
            } catch (Exception ignored) {
                // Exiting anyway.
            }
        }
    }

    private static String handle(String[] f) throws Exception {
        switch (f[0]) {
            case "OPEN": {
                String user = f.length > 3 ? unescape(f[3]) : null;
                Connection c =
                        user == null
                                ? DriverManager.getConnection(unescape(f[2]))
                                : DriverManager.getConnection(unescape(f[2]), user, "");
                cacheFinishedStatus(c);
                int id = nextId++;
                CONNECTIONS.put(id, c);
                FETCH_SIZES.put(id, Integer.parseInt(f[1]));
                return "OK\t" + id;
            }
            case "EXEC": {
                int id = Integer.parseInt(f[1]);
                return exec(connection(id), FETCH_SIZES.get(id), unescape(f[2]));
            }
            case "CLOSE": {
                int id = Integer.parseInt(f[1]);
                Connection c = connection(id);
                CONNECTIONS.remove(id);
                FETCH_SIZES.remove(id);
                c.close();
                return "OK";
            }
            default:
                return "ERR\tunknown command " + escape(f[0]);
        }
    }

    /** Answer GetOperationStatus of a FINISHED operation without a round trip (see above). */
    private static void cacheFinishedStatus(Connection c) throws Exception {
        Field field = c.getClass().getDeclaredField("client");
        field.setAccessible(true);
        TCLIService.Iface inner = (TCLIService.Iface) field.get(c);
        TGetOperationStatusResp[] last = new TGetOperationStatusResp[1];
        TOperationHandle[] lastHandle = new TOperationHandle[1];
        Object wrapped =
                Proxy.newProxyInstance(
                        FetchAll.class.getClassLoader(),
                        new Class<?>[] {TCLIService.Iface.class},
                        (proxy, method, args) -> {
                            boolean status = method.getName().equals("GetOperationStatus");
                            TOperationHandle handle =
                                    status ? ((TGetOperationStatusReq) args[0]).getOperationHandle() : null;
                            if (status && last[0] != null && handle.equals(lastHandle[0])) {
                                return last[0];
                            }
                            Object answer;
                            try {
                                answer = method.invoke(inner, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                            if (status) {
                                TGetOperationStatusResp resp = (TGetOperationStatusResp) answer;
                                boolean finished =
                                        resp.isSetOperationState()
                                                && resp.getOperationState()
                                                        == TOperationState.FINISHED_STATE;
                                last[0] = finished ? resp : null;
                                lastHandle[0] = finished ? handle : null;
                            }
                            return answer;
                        });
        field.set(c, wrapped);
    }

    private static Connection connection(int id) {
        Connection c = CONNECTIONS.get(id);
        if (c == null) {
            throw new IllegalArgumentException("no connection " + id);
        }
        return c;
    }

    private static String exec(Connection c, int fetchSize, String sql) throws Exception {
        long start = System.nanoTime();
        long rows = 0;
        long checksum = 0;
        try (Statement st = c.createStatement()) {
            st.setFetchSize(fetchSize);
            if (st.execute(sql)) {
                try (ResultSet rs = st.getResultSet()) {
                    rs.setFetchSize(fetchSize);
                    int columns = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        rows++;
                        for (int i = 1; i <= columns; i++) {
                            checksum = checksum * 31 + fold(rs.getObject(i));
                        }
                    }
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        return "OK\t" + rows + "\t" + elapsed + "\t" + checksum;
    }

    /** A cheap digest of one value that still needs the value itself. */
    private static long fold(Object v) {
        if (v == null) {
            return 7;
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Double || v instanceof Float) {
            return Double.doubleToLongBits(((Number) v).doubleValue());
        }
        if (v instanceof java.math.BigDecimal) {
            return ((java.math.BigDecimal) v).unscaledValue().longValue();
        }
        if (v instanceof java.util.Date) {
            return ((java.util.Date) v).getTime();
        }
        if (v instanceof String) {
            return ((String) v).length();
        }
        return v.hashCode();
    }

    private static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(t.toString());
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            b.append(" <- ").append(c);
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '\\':
                    b.append("\\\\");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                default:
                    b.append(ch);
            }
        }
        return b.toString();
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '\\' && i + 1 < s.length()) {
                char next = s.charAt(++i);
                switch (next) {
                    case 't':
                        b.append('\t');
                        break;
                    case 'n':
                        b.append('\n');
                        break;
                    case 'r':
                        b.append('\r');
                        break;
                    default:
                        b.append(next);
                }
            } else {
                b.append(ch);
            }
        }
        return b.toString();
    }
}
