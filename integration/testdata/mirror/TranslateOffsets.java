import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Prints what Kafka's RemoteClusterUtils.translateOffsets reads from the
 * checkpoints topic of a remote cluster alias: one "topic partition offset"
 * line per partition of the group, sorted.
 * Arguments: bootstrap servers (the target cluster), remote alias, group.
 */
public class TranslateOffsets {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        Map<TopicPartition, OffsetAndMetadata> offsets =
            RemoteClusterUtils.translateOffsets(props, args[1], args[2], Duration.ofSeconds(30));
        TreeMap<String, Long> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            sorted.put(e.getKey().topic() + " " + e.getKey().partition(), e.getValue().offset());
        }
        for (Map.Entry<String, Long> e : sorted.entrySet()) {
            System.out.println(e.getKey() + " " + e.getValue());
        }
    }
}
