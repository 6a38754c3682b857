package statedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/orphanreaper/reaper/ledger"
)

// JSONProblem says what is wrong with a JSON document without quoting it:
// encoding/json's syntax errors name the offending character, and a root
// reaper must not copy bytes of a file a user pointed it at into its logs.
func JSONProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
			want = "a number"
		case reflect.Pointer:
			want = "a value"
		}
		if te.Field != "" {
			return fmt.Sprintf("%s: want %s", te.Field, want)
		}
		return "want " + want
	}
	return "not valid JSON"
}

// JSONErrLine is the line of a JSON decoding error in b, or 0.
func JSONErrLine(b []byte, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return ledger.LineOf(b, se.Offset)
	case errors.As(err, &te):
		return ledger.LineOf(b, te.Offset)
	}
	return 0
}
