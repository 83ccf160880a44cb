package worker

import (
	"reflect"
	"testing"
)

// A connector in the config topic whose status no worker has written yet
// (right after its create) is UNASSIGNED, reported by this worker, with no
// tasks; once its owner wrote one, that record is the status; task records
// beyond the connector's task count are left out.
func TestConnectorStatus(t *testing.T) {
	cs := ConnectorSnapshot{Config: map[string]string{"connector.class": "FileStreamSource"}, Tasks: []map[string]string{{}}}
	got := connectorStatus("c", ConnectorSnapshot{Config: cs.Config}, ConnectorState{}, false, nil, "w1:8083", "source")
	want := ConnectorStateInfo{Name: "c", Connector: ConnectorState{State: StateUnassigned, WorkerID: "w1:8083"}, Tasks: []TaskState{}, Type: "source"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("no status record: %+v, want %+v", got, want)
	}
	running := ConnectorState{State: StateRunning, WorkerID: "w2:8083", Version: "4.4.0"}
	tasks := []TaskState{{ID: 0, State: StateRunning, WorkerID: "w2:8083"}, {ID: 1, State: StateUnassigned, WorkerID: "w3:8083"}}
	got = connectorStatus("c", cs, running, true, tasks, "w1:8083", "source")
	want = ConnectorStateInfo{Name: "c", Connector: running, Tasks: tasks[:1], Type: "source"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with records: %+v, want %+v", got, want)
	}
}
