package restapi_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/contract"
	"github.com/tributary-dev/tributary/restapi/restapitest"
)

// TestContract plays the contract table against the REST layer over a fake
// herder (but for the cases about a running worker's timing, which the
// fake does not model).
func TestContract(t *testing.T) {
	srv := httptest.NewServer(restapi.New(restapitest.NewHerder(), restapi.Options{}))
	defer srv.Close()
	contract.Run(t, contract.Config{
		BaseURL:     srv.URL,
		Client:      srv.Client(),
		Dir:         t.TempDir(),
		PollTimeout: time.Second,
		SkipLive:    true,
	})
}
