// IcebergRESTServer is an Iceberg REST catalog for the Iceberg sink's tests,
// made of Apache Iceberg's own parts: the request handling of
// org.apache.iceberg.rest.CatalogHandlers (what Iceberg's REST fixture
// server runs) and the REST model's JSON (RESTObjectMapper), over a
// JdbcCatalog on SQLite and S3FileIO. Iceberg publishes no runnable REST
// catalog to Maven Central (its fixture is a Docker image), so this serves
// the REST routes a client needs with the JDK's HTTP server.
//
// Usage: java IcebergRESTServer port=<port> uri=jdbc:sqlite:<path> warehouse=<loc> [catalog property=value ...]
//
// It prints "ready" once listening, and logs each request to stderr.
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;

public class IcebergRESTServer {
    static ObjectMapper mapper;
    static JdbcCatalog catalog;

    public static void main(String[] args) throws Exception {
        Map<String, String> props = new HashMap<>();
        for (String kv : args) {
            int i = kv.indexOf('=');
            props.put(kv.substring(0, i), kv.substring(i + 1));
        }
        int port = Integer.parseInt(props.remove("port"));
        Method m = Class.forName("org.apache.iceberg.rest.RESTObjectMapper").getDeclaredMethod("mapper");
        m.setAccessible(true);
        mapper = (ObjectMapper) m.invoke(null);
        catalog = new JdbcCatalog();
        catalog.setConf(new org.apache.hadoop.conf.Configuration());
        catalog.initialize(props.getOrDefault("catalog-name", "iceberg"), props);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.createContext("/", IcebergRESTServer::handle);
        server.start();
        System.out.println("ready");
        System.out.flush();
    }

    static void handle(HttpExchange ex) throws IOException {
        String method = ex.getRequestMethod();
        String path = ex.getRequestURI().getRawPath();
        System.err.println(method + " " + path);
        int status = 200;
        Object body;
        try {
            String[] p = path.replaceAll("^/+|/+$", "").split("/");
            for (int i = 0; i < p.length; i++) p[i] = URLDecoder.decode(p[i], StandardCharsets.UTF_8);
            body = route(method, p, ex.getRequestBody());
            if (body == null) status = 204;
        } catch (NoSuchTableException | NoSuchNamespaceException e) {
            status = 404;
            body = error(e, status);
        } catch (AlreadyExistsException | CommitFailedException e) {
            status = 409;
            body = error(e, status);
        } catch (NamespaceNotEmptyException e) {
            status = 409;
            body = error(e, status);
        } catch (ValidationException | IllegalArgumentException e) {
            status = 400;
            body = error(e, status);
        } catch (UnsupportedOperationException e) {
            status = 406;
            body = error(e, status);
        } catch (Exception e) {
            e.printStackTrace();
            status = 500;
            body = error(e, status);
        }
        byte[] out = body == null ? new byte[0] : mapper.writeValueAsBytes(body);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        if (status == 204 || method.equals("HEAD")) {
            ex.sendResponseHeaders(status, -1);
        } else {
            ex.sendResponseHeaders(status, out.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(out);
            }
        }
        ex.close();
    }

    static ErrorResponse error(Exception e, int code) {
        return ErrorResponse.builder().responseCode(code).withType(e.getClass().getSimpleName())
            .withMessage(String.valueOf(e.getMessage())).build();
    }

    static <T> T read(InputStream in, Class<T> c) throws IOException {
        return mapper.readValue(in, c);
    }

    // route serves /v1/... (an optional prefix segment before namespaces is not used).
    static Object route(String method, String[] p, InputStream in) throws IOException {
        if (p.length < 2 || !p[0].equals("v1")) throw new NoSuchTableException("no route %s", String.join("/", p));
        if (p.length == 2 && p[1].equals("config")) {
            return ConfigResponse.builder().build();
        }
        if (!p[1].equals("namespaces")) throw new UnsupportedOperationException("unsupported route " + String.join("/", p));
        if (p.length == 2) {
            if (method.equals("GET")) return CatalogHandlers.listNamespaces(catalog, Namespace.empty());
            if (method.equals("POST")) return CatalogHandlers.createNamespace(catalog, read(in, CreateNamespaceRequest.class));
        }
        Namespace ns = RESTUtil.decodeNamespace(p[2], "\u001f");
        if (p.length == 3) {
            switch (method) {
                case "GET": return CatalogHandlers.loadNamespace(catalog, ns);
                case "HEAD": CatalogHandlers.namespaceExists(catalog, ns); return null;
                case "DELETE": CatalogHandlers.dropNamespace(catalog, ns); return null;
            }
        }
        if (p.length >= 4 && p[3].equals("tables")) {
            if (p.length == 4) {
                if (method.equals("GET")) return CatalogHandlers.listTables(catalog, ns);
                if (method.equals("POST")) {
                    CreateTableRequest req = read(in, CreateTableRequest.class);
                    return req.stageCreate() ? CatalogHandlers.stageTableCreate(catalog, ns, req) : CatalogHandlers.createTable(catalog, ns, req);
                }
            }
            if (p.length == 5) {
                TableIdentifier id = TableIdentifier.of(ns, p[4]);
                switch (method) {
                    case "GET": return CatalogHandlers.loadTable(catalog, id, RESTCatalogProperties.SnapshotMode.ALL);
                    case "HEAD": CatalogHandlers.tableExists(catalog, id); return null;
                    case "POST": return CatalogHandlers.updateTable(catalog, id, read(in, UpdateTableRequest.class));
                    case "DELETE": CatalogHandlers.dropTable(catalog, id); return null;
                }
            }
        }
        throw new UnsupportedOperationException("unsupported " + method + " " + String.join("/", p));
    }
}
