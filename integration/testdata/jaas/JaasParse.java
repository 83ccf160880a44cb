import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

/**
 * Parses each sasl.jaas.config value of a file (one base64 value a line) as
 * a Kafka client does (JaasContext.loadClientContext) and prints, a line
 * each, "OK class flag key=value..." (base64 values, keys sorted) or "ERR
 * message". Tributary's JAAS parser is compared with it.
 */
public class JaasParse {
    public static void main(String[] args) throws Exception {
        Base64.Encoder enc = Base64.getEncoder();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String config = new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
            try {
                JaasContext ctx = JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(config)));
                AppConfigurationEntry e = ctx.configurationEntries().get(0);
                StringBuilder b = new StringBuilder("OK ").append(e.getLoginModuleName()).append(' ')
                    .append(e.getControlFlag().toString().replace("LoginModuleControlFlag: ", ""));
                for (Map.Entry<String, ?> o : new TreeMap<>(e.getOptions()).entrySet()) {
                    b.append(' ').append(o.getKey()).append('=')
                        .append(enc.encodeToString(String.valueOf(o.getValue()).getBytes(StandardCharsets.UTF_8)));
                }
                System.out.println(b);
            } catch (Exception ex) {
                System.out.println("ERR " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
            }
        }
    }
}
