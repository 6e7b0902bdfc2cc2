package httpadapter

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// indexedField completes the path of a JSON decoding error in a T with the index of each
// array item on it: encoding/json names the second split's value "splits.value", and this
// returns "splits[1].value", as the Service names the fields it checks. It walks body
// along the path and, at each array, decodes the items one at a time into the item type
// until one fails. A path it cannot follow is returned as it was. It runs only when
// decoding has already failed, so its extra decoding costs nothing on a good request.
func indexedField(body []byte, t reflect.Type, field string) string {
	if out, ok := indexPath(body, t, strings.Split(field, ".")); ok {
		return out
	}
	return field
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
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
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
