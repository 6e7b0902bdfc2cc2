package httpadapter

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// indexedField completes the path of a JSON decoding error in a T with the index of each
// array item on it: encoding/json names the second split's value "splits.value", and this
// returns "splits[1].value", as the Service names the fields it checks. It walks body
// along the path and, at each array, decodes the items one at a time into the item type
// until one fails. A path it cannot follow is returned as it was. It runs only when
// decoding has already failed, so its extra decoding costs nothing on a good request.
func indexedField(body []byte, t reflect.Type, field string) string {
	field = withoutEmbedded(t, field)
	if !strings.Contains(field, ".") && !isList(t, field) {
		return field // a top-level field that is not an array has no index to add
	}
	if out, ok := indexPath(body, t, strings.Split(field, ".")); ok {
		return out
	}
	return field
}

// withoutEmbedded drops from a field path of struct t the names of embedded structs, which
// encoding/json puts in it ("applicationFields.type" for the top-level "type" that
// applicationCreateBody takes from its embedded applicationFields): the client sent no
// field of that name.
func withoutEmbedded(t reflect.Type, field string) string {
	var out []string
	for seg := range strings.SplitSeq(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			if sf, ok := t.FieldByName(seg); ok && sf.Anonymous && sf.Tag.Get("json") == "" {
				t = sf.Type // its fields are the parent's, on the wire
				continue
			}
		}
		out = append(out, seg)
		if t != nil && t.Kind() == reflect.Struct {
			t, _ = jsonFieldType(t, seg)
		} else {
			t = nil
		}
	}
	return strings.Join(out, ".")
}

// isList reports whether the field of struct t with JSON key name is a slice or array.
func isList(t reflect.Type, name string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	ft, ok := jsonFieldType(t, name)
	if !ok {
		return true // unknown: let indexPath try, as before
	}
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	return ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array
}

func indexPath(raw []byte, t reflect.Type, path []string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(path) == 0 {
		return "", true
	}
	if t.Kind() != reflect.Struct {
		return "", false
	}
	ft, ok := jsonFieldType(t, path[0])
	if !ok {
		return "", false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	val, ok := jsonMember(obj, path[0])
	if !ok {
		return "", false
	}
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.Slice && ft.Kind() != reflect.Array {
		rest, ok := indexPath(val, ft, path[1:])
		return joinPath(path[0], rest), ok
	}
	var items []json.RawMessage
	if json.Unmarshal(val, &items) != nil {
		return "", false // not an array: the error is about the field itself
	}
	for i, item := range items {
		if json.Unmarshal(item, reflect.New(ft.Elem()).Interface()) == nil {
			continue
		}
		rest, ok := indexPath(item, ft.Elem(), path[1:])
		return joinPath(path[0]+"["+strconv.Itoa(i)+"]", rest), ok
	}
	return "", false
}

// jsonFieldType is the type of the field of struct t that encoding/json decodes the key
// name into (promoted fields of embedded structs included).
func jsonFieldType(t reflect.Type, name string) (reflect.Type, bool) {
	fields, ok := jsonFieldTypes.Load(t)
	if !ok {
		fields, _ = jsonFieldTypes.LoadOrStore(t, jsonFields(t))
	}
	ft, ok := fields.(map[string]reflect.Type)[name]
	return ft, ok
}

// jsonFieldTypes caches jsonFields by struct type: the request body types of this package,
// a fixed set.
var jsonFieldTypes sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps each JSON key of struct t to the type of its field.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch tag {
		case "-":
			continue
		case "":
			tag = f.Name
		}
		if _, taken := out[tag]; !taken { // the first one wins, as VisibleFields lists the shallowest first
			out[tag] = f.Type
		}
	}
	return out
}

// jsonMember is the value of key name in obj, matched as encoding/json matches it: exactly,
// or else without regard to case.
func jsonMember(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func joinPath(head, rest string) string {
	if rest == "" {
		return head
	}
	return head + "." + rest
}
