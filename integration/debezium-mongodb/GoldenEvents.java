/*
 * GoldenEvents runs Debezium 3.6.1's own MongoDB event builder (the record
 * emitters, collection schema and JSON serialization of
 * debezium-connector-mongodb) without a server, on change stream event
 * documents and snapshot documents given as canonical extended JSON, and
 * prints the records it emits through Kafka's JsonConverter: one JSON line
 * per record {"topic", "op", "key": {schema, payload}, "value": {schema,
 * payload}}. connectors/mongodb's tests compare Tributary's events with
 * these (testdata/golden-*.jsonl); regenerate them with gen-golden.sh.
 *
 * Input lines: "change <event>" or "read <db>.<collection> <document>";
 * blank lines and lines starting with # are skipped. The system property
 * field.exclude.list is passed to the connector configuration.
 *
 * It lives in Debezium's package to build the collection schema the way
 * MongoDbSchema.schemaFor does (its JSON serializer is package-private).
 * Test tooling only; never part of the product.
 */
package io.debezium.connector.mongodb;

import java.io.BufferedReader;
import java.io.FileReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.codecs.DecoderContext;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.changestream.ChangeStreamDocument;

import io.debezium.config.Configuration;
import io.debezium.data.Envelope;
import io.debezium.data.Json;
import io.debezium.pipeline.spi.ChangeRecordEmitter;
import io.debezium.pipeline.spi.OffsetContext;
import io.debezium.pipeline.txmetadata.TransactionMonitor;
import io.debezium.schema.DataCollectionSchema;
import io.debezium.util.Clock;

public final class GoldenEvents {

    public static void main(String[] args) throws Exception {
        Configuration config = Configuration.create()
                .with("topic.prefix", "golden")
                .with("mongodb.connection.string", "mongodb://localhost:27017/?replicaSet=rs0")
                .with("field.exclude.list", System.getProperty("field.exclude.list", ""))
                .build();
        MongoDbConnectorConfig cc = new MongoDbConnectorConfig(config);
        Filters filters = new Filters(config);
        JsonSerialization serialization = new JsonSerialization();
        Schema sourceSchema = cc.getSourceInfoStructMaker().schema();

        JsonConverter keys = new JsonConverter();
        keys.configure(Map.of("schemas.enable", "true"), true);
        JsonConverter values = new JsonConverter();
        values.configure(Map.of("schemas.enable", "true"), false);

        var codec = ChangeStreamDocument.createCodec(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());
        MongoDbPartition partition = new MongoDbPartition("golden");

        ChangeRecordEmitter.Receiver<MongoDbPartition> receiver = new ChangeRecordEmitter.Receiver<>() {
            @Override
            public void changeRecord(MongoDbPartition p, DataCollectionSchema schema, Envelope.Operation op, Object key, Struct value,
                                     OffsetContext offset, org.apache.kafka.connect.header.ConnectHeaders headers) {
                String topic = "golden." + ((CollectionId) schema.id()).dbName() + "." + ((CollectionId) schema.id()).name();
                byte[] k = keys.fromConnectData(topic, schema.keySchema(), key);
                byte[] v = values.fromConnectData(topic, value.schema(), value);
                System.out.println("{\"topic\":\"" + topic + "\",\"op\":\"" + op.code() + "\",\"key\":"
                        + new String(k, StandardCharsets.UTF_8) + ",\"value\":" + new String(v, StandardCharsets.UTF_8) + "}");
            }
        };

        try (BufferedReader in = new BufferedReader(new FileReader(args[0], StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split(" ", 2);
                MongoDbOffsetContext offset = MongoDbOffsetContext.empty(cc);
                if (parts[0].equals("change")) {
                    BsonDocument doc = BsonDocument.parse(parts[1]);
                    ChangeStreamDocument<BsonDocument> event = codec.decode(new BsonDocumentReader(doc), DecoderContext.builder().build());
                    CollectionId id = new CollectionId(event.getNamespace().getDatabaseName(), event.getNamespace().getCollectionName());
                    offset.changeStreamEvent(event);
                    new io.debezium.connector.mongodb.recordemitter.MongoDbChangeRecordEmitter(partition, offset, Clock.system(), event, cc)
                            .emitChangeRecords(schemaFor(id, filters, serialization, sourceSchema), receiver);
                }
                else if (parts[0].equals("read")) {
                    String[] rest = parts[1].split(" ", 2);
                    CollectionId id = CollectionId.parse(rest[0]);
                    BsonDocument doc = BsonDocument.parse(rest[1]);
                    offset.startInitialSnapshot();
                    offset.readEvent(id, Instant.now());
                    new io.debezium.connector.mongodb.recordemitter.MongoDbSnapshotRecordEmitter(partition, offset, Clock.system(), doc, cc)
                            .emitChangeRecords(schemaFor(id, filters, serialization, sourceSchema), receiver);
                }
                else {
                    throw new IllegalArgumentException("unknown input line: " + line);
                }
            }
        }
    }

    /** The collection schema as MongoDbSchema.schemaFor builds it. */
    private static MongoDbCollectionSchema schemaFor(CollectionId id, Filters filters, JsonSerialization serialization, Schema sourceSchema) {
        String topic = "golden." + id.dbName() + "." + id.name();
        Schema keySchema = SchemaBuilder.struct().name(topic + ".Key").field("id", Schema.STRING_SCHEMA).build();
        Schema valueSchema = SchemaBuilder.struct()
                .name(Envelope.schemaName(topic))
                .field(Envelope.FieldName.BEFORE, Json.builder().optional().build())
                .field(Envelope.FieldName.AFTER, Json.builder().optional().build())
                .field(MongoDbFieldName.UPDATE_DESCRIPTION, MongoDbSchema.UPDATED_DESCRIPTION_SCHEMA)
                .field(Envelope.FieldName.SOURCE, sourceSchema)
                .field(Envelope.FieldName.OPERATION, Schema.OPTIONAL_STRING_SCHEMA)
                .field(Envelope.FieldName.TIMESTAMP, Schema.OPTIONAL_INT64_SCHEMA)
                .field(Envelope.FieldName.TRANSACTION, TransactionMonitor.TRANSACTION_BLOCK_SCHEMA)
                .build();
        return new MongoDbCollectionSchema(id, filters.fieldFilterFor(id), keySchema, serialization::getDocumentId,
                Envelope.fromSchema(valueSchema), valueSchema, serialization::getDocumentValue);
    }
}
