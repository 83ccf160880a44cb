import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.ObjectMapper;

import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.signer.Aws4Signer;
import software.amazon.awssdk.auth.signer.params.Aws4PresignerParams;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.regions.Region;
import software.amazon.msk.auth.iam.IAMOAuthBearerToken;
import software.amazon.msk.auth.iam.internals.AWS4SignedPayloadGenerator;
import software.amazon.msk.auth.iam.internals.AuthenticationRequestParams;

/**
 * Checks what Tributary sends to MSK against aws-msk-iam-auth: prints the
 * library's own AWS_MSK_IAM payload for the same credentials and host, the
 * signature the AWS SDK's signer (the one the library uses, with its clock
 * fixed at the payload's X-Amz-Date) computes for Tributary's payload and
 * for its OAUTHBEARER token, and what the library's IAMOAuthBearerToken
 * reads from that token.
 *
 * Arguments: accessKey secretKey sessionToken host payloadFile tokenFile.
 */
public class MskCheck {
    static final DateTimeFormatter AMZ = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    public static void main(String[] a) throws Exception {
        AwsSessionCredentials creds = AwsSessionCredentials.create(a[0], a[1], a[2]);
        String host = a[3];
        ObjectMapper json = new ObjectMapper();

        byte[] lib = new AWS4SignedPayloadGenerator().signedPayload(AuthenticationRequestParams.create(host, creds, "aws-msk-iam-auth-test"));
        System.out.println("LIBPAYLOAD " + json.writeValueAsString(new TreeMap<>(json.readValue(lib, Map.class))));

        @SuppressWarnings("unchecked")
        Map<String, String> p = json.readValue(Files.readAllBytes(Paths.get(a[4])), Map.class);
        String region = p.get("x-amz-credential").split("/")[2];
        System.out.println("PAYLOADSIG " + sign(creds, p.get("host"), region, p.get("x-amz-date"), Integer.parseInt(p.get("x-amz-expires"))));

        String token = new String(Files.readAllBytes(Paths.get(a[5])), StandardCharsets.UTF_8).trim();
        URI uri = new URI(new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8));
        Map<String, String> q = new HashMap<>();
        for (String kv : uri.getRawQuery().split("&")) {
            String[] parts = kv.split("=", 2);
            q.put(URLDecoder.decode(parts[0], StandardCharsets.UTF_8), URLDecoder.decode(parts[1], StandardCharsets.UTF_8));
        }
        String tokenRegion = q.get("X-Amz-Credential").split("/")[2];
        System.out.println("TOKENSIG " + sign(creds, uri.getHost(), tokenRegion, q.get("X-Amz-Date"), Integer.parseInt(q.get("X-Amz-Expires")))
            + " " + q.get("X-Amz-Signature"));
        IAMOAuthBearerToken t = new IAMOAuthBearerToken(token);
        System.out.println("TOKEN principal=" + t.principalName() + " lifetimeMs=" + t.lifetimeMs() + " startTimeMs=" + t.startTimeMs());
    }

    /** The signature of GET https://host/?Action=kafka-cluster:Connect presigned at amzDate for expires seconds. */
    static String sign(AwsSessionCredentials creds, String host, String region, String amzDate, int expires) {
        Instant at = LocalDateTime.parse(amzDate, AMZ).toInstant(ZoneOffset.UTC);
        SdkHttpFullRequest req = SdkHttpFullRequest.builder().method(SdkHttpMethod.GET).protocol("https").host(host)
            .appendRawQueryParameter("Action", "kafka-cluster:Connect").build();
        Aws4PresignerParams params = Aws4PresignerParams.builder().awsCredentials(creds).expirationTime(at.plusSeconds(expires))
            .signingRegion(Region.of(region)).signingName("kafka-cluster").signingClockOverride(Clock.fixed(at, ZoneOffset.UTC)).build();
        return Aws4Signer.create().presign(req, params).rawQueryParameters().get("X-Amz-Signature").get(0);
    }
}
