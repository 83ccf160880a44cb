package worker

import (
	"slices"
	"testing"

	"github.com/tributary-dev/tributary/plugins"
	"github.com/tributary-dev/tributary/sdk"
)

func TestExactlyOncePreflight(t *testing.T) {
	src := sdk.Spec{Class: "x.Src", Type: sdk.Source}
	sink := sdk.Spec{Class: "x.Sink", Type: sdk.Sink}
	if q := exactlyOnceQuestions(src, map[string]string{"exactly.once.support": " Required ", "transaction.boundary": "CONNECTOR"}); !q.Support || !q.Boundaries {
		t.Errorf("questions %+v", q)
	}
	if q := exactlyOnceQuestions(src, map[string]string{}); q != (plugins.ExactlyOnceQuestions{}) {
		t.Errorf("defaults ask nothing: %+v", q)
	}
	if q := exactlyOnceQuestions(sink, map[string]string{"exactly.once.support": "required"}); q != (plugins.ExactlyOnceQuestions{}) {
		t.Errorf("a sink is asked nothing: %+v", q)
	}
	infos := func() sdk.ConfigInfos {
		return sdk.ConfigInfos{Configs: []sdk.ConfigInfo{
			{Value: sdk.ConfigValueInfo{Name: "exactly.once.support"}},
			{Value: sdk.ConfigValueInfo{Name: "transaction.boundary"}},
		}}
	}
	both := plugins.ExactlyOnceQuestions{Support: true, Boundaries: true}
	for _, tc := range []struct {
		name              string
		enabled           bool
		a                 plugins.ExactlyOnceAnswers
		support, boundary []string
	}{
		{"all good", true, plugins.ExactlyOnceAnswers{Support: sdk.ExactlyOnceSupported, Boundaries: true}, nil, nil},
		{"worker disabled", false, plugins.ExactlyOnceAnswers{Support: sdk.ExactlyOnceSupported, Boundaries: true}, []string{msgEOSDisabled}, nil},
		{"undeclared", true, plugins.ExactlyOnceAnswers{}, []string{msgEOSUndeclared}, []string{msgNoBoundaries}},
		{"unsupported", false, plugins.ExactlyOnceAnswers{Support: sdk.ExactlyOnceUnsupported, Boundaries: true}, []string{msgEOSDisabled, msgEOSUnsupported}, nil},
		{"errors", true, plugins.ExactlyOnceAnswers{SupportErr: " boom ", BoundariesErr: " "},
			[]string{"An unexpected error occurred during validation: boom"}, []string{"An unexpected error occurred during validation; please see the worker logs for more details."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infos()
			addExactlyOnceErrors(&in, tc.enabled, both, tc.a)
			if !slices.Equal(in.Configs[0].Value.Errors, tc.support) || !slices.Equal(in.Configs[1].Value.Errors, tc.boundary) || in.ErrorCount != len(tc.support)+len(tc.boundary) {
				t.Errorf("got %q %q (%d)", in.Configs[0].Value.Errors, in.Configs[1].Value.Errors, in.ErrorCount)
			}
		})
	}
	// A key whose value was refused is not checked further.
	in := infos()
	in.Configs[0].Value.Errors = []string{"Invalid value"}
	addExactlyOnceErrors(&in, false, both, plugins.ExactlyOnceAnswers{Boundaries: true})
	if len(in.Configs[0].Value.Errors) != 1 || in.ErrorCount != 1 {
		t.Errorf("an invalid value: %q", in.Configs[0].Value.Errors)
	}
}
