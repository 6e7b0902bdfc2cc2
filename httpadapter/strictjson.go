package httpadapter

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Request bodies are read as the real API (JavaScript) reads them: a key names a field
// only when it is spelled exactly as the field's name, and no key is given twice in one
// object. encoding/json alone does neither: it also matches keys in any case and keeps the
// last of two, so {"value":100,"Value":5000000} would be stored as 5000000 here while the
// API, and anything that checked the body first, read 100.
//
// exactKeys is a pass over the body before encoding/json decodes it, guided by the Go type
// the body is decoded into. It checks the grammar as encoding/json does, and:
//   - refuses a key given twice in any object, at any depth, naming its path;
//   - renames to "" each key that encoding/json would match to a field only by ignoring
//     case. No field is named "", so such a key is what it is on the wire, an unknown key,
//     which encoding/json skips as it skips every other unknown key;
//   - refuses an object that names one field in two cases ("value" and "Value"): the API
//     reads the exact one, but a reader that ignores case (another service, a proxy, a log
//     search) would read the other, so the body says two things.
//
// encoding/json then decodes the result as it always has, so types, error messages and
// everything else are unchanged. A body that needs no renaming (every body written with
// the documented names) is decoded as it came, without a copy.

// duplicateKeyError is a key given twice in one object, or one field named in two cases.
// path names the key in the body: "value", "customer.name", "splits[1].value".
type duplicateKeyError struct {
	path      string
	spellings [2]string // for one field named in two cases, the two keys: "value", "Value"
}

func (e *duplicateKeyError) Error() string {
	return "duplicate key " + strconv.Quote(e.path) + e.detail()
}

// invalid is the EINVALID error of a request body with the duplicate, in the value at
// path ("" for the body itself): `duplicate key "customer.name" in the body`.
func (e *duplicateKeyError) invalid(path string) error {
	if path != "" {
		path = dupPath(path, e.path)
	} else {
		path = e.path
	}
	return invalid(path, "duplicate key %q in the body%s: give each key once", path, e.detail())
}

// detail is "" for a key given twice, or says which two keys differ only in case.
func (e *duplicateKeyError) detail() string {
	if e.spellings[0] == "" {
		return ""
	}
	return fmt.Sprintf(" (%q and %q differ only in case)", e.spellings[0], e.spellings[1])
}

// errNotJSON is text that is not JSON; encoding/json says where it goes wrong.
var errNotJSON = errors.New("not JSON")

// maxJSONDepth is encoding/json's limit on nested arrays and objects.
const maxJSONDepth = 10000

// unmarshalExact is json.Unmarshal with exact keys and no key twice in an object (see
// exactKeys), for a pointer to a fresh value: the values this package reads from a request
// body. A duplicated key is a *duplicateKeyError; any other failure is encoding/json's.
func unmarshalExact(data []byte, v any) error {
	exact, err := exactKeys(data, reflect.TypeOf(v))
	if err == errNotJSON {
		if err := json.Unmarshal(data, v); err != nil {
			return err
		}
		return errNotJSON // not reached: both read the same grammar
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(exact, v)
}

// exactKeys returns data ready for json.Unmarshal into a value of type t with exact keys:
// data itself, or a copy whose keys that encoding/json would match to a field of t only
// without regard to case are "". It fails with a *duplicateKeyError for a key given twice
// in an object or a field named in two cases, and with errNotJSON for text that is not one
// JSON value.
func exactKeys(data []byte, t reflect.Type) ([]byte, error) {
	s := exactScanner{data: data}
	if err := s.value(shapeOf(t)); err != nil {
		return nil, err
	}
	s.skipSpace()
	if s.pos != len(data) {
		return nil, errNotJSON
	}
	if len(s.renames) == 0 {
		return data, nil
	}
	out := make([]byte, 0, len(data))
	last := 0
	for _, r := range s.renames {
		out = append(append(out, data[last:r.start]...), `""`...)
		last = r.end
	}
	return append(out, data[last:]...), nil
}

// span is the bytes [start, end) of a key in the body, quotes included.
type span struct{ start, end int }

// exactScanner walks one JSON text along the shape of the Go type it is decoded into.
type exactScanner struct {
	data    []byte
	pos     int
	depth   int
	renames []span // keys to rename to "", in order
}

// smallObject is the most keys an object's duplicates are looked for by comparing each key
// with those before it; a larger object puts its keys in a map, so that a body of many keys
// costs time in proportion to its size.
const smallObject = 32

func (s *exactScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value reads one JSON value decoded into sh.
func (s *exactScanner) value(sh *jsonShape) error {
	s.skipSpace()
	if s.pos == len(s.data) {
		return errNotJSON
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(sh)
	case c == '[':
		return s.array(sh)
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return errNotJSON
}

func (s *exactScanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return errNotJSON
	}
	s.pos += len(lit)
	return nil
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *exactScanner) number() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.digits() == 0:
		return errNotJSON
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return errNotJSON
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return errNotJSON
		}
	}
	return nil
}

func (s *exactScanner) digits() int {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}

// str reads a string and reports whether its text is plain: no escape and only ASCII, so
// that the bytes between its quotes are the string encoding/json reads.
func (s *exactScanner) str() (plain bool, err error) {
	plain = true
	for s.pos++; s.pos < len(s.data); s.pos++ {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return plain, nil
		case c < 0x20:
			return false, errNotJSON
		case c >= utf8.RuneSelf:
			plain = false
		case c == '\\':
			plain = false
			s.pos++
			if s.pos == len(s.data) {
				return false, errNotJSON
			}
			switch s.data[s.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.pos+4 >= len(s.data) {
					return false, errNotJSON
				}
				for _, h := range s.data[s.pos+1 : s.pos+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false, errNotJSON
					}
				}
				s.pos += 4
			default:
				return false, errNotJSON
			}
		}
	}
	return false, errNotJSON
}

func (s *exactScanner) enter() error {
	if s.depth++; s.depth > maxJSONDepth {
		return errNotJSON
	}
	s.pos++
	return nil
}

func (s *exactScanner) array(sh *jsonShape) error {
	if err := s.enter(); err != nil {
		return err
	}
	elem := sh.elemOf(shapeList)
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := s.value(elem); err != nil {
			if dup, ok := err.(*duplicateKeyError); ok {
				dup.path = dupPath("["+strconv.Itoa(i)+"]", dup.path)
			}
			return err
		}
		s.skipSpace()
		if s.pos == len(s.data) {
			return errNotJSON
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return nil
		default:
			return errNotJSON
		}
	}
}

func (s *exactScanner) object(sh *jsonShape) error {
	if err := s.enter(); err != nil {
		return err
	}
	var small [16][]byte // the keys of most objects, on the stack
	keys := small[:0]
	var seen map[string]struct{} // the keys, once there are more than smallObject
	renamed := false             // a key of this object is renamed
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		s.skipSpace()
		if s.pos == len(s.data) || s.data[s.pos] != '"' {
			return errNotJSON
		}
		start := s.pos
		plain, err := s.str()
		if err != nil {
			return err
		}
		key := s.data[start+1 : s.pos-1]
		if !plain && (bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key)) {
			var k string // the string encoding/json reads
			if json.Unmarshal(s.data[start:s.pos], &k) != nil {
				return errNotJSON
			}
			key = []byte(k)
		}

		if seen == nil && len(keys) == smallObject {
			seen = make(map[string]struct{}, 2*smallObject)
			for _, k := range keys {
				seen[string(k)] = struct{}{}
			}
		}
		var dup bool
		if seen != nil {
			_, dup = seen[string(key)]
			seen[string(key)] = struct{}{}
		} else {
			dup = slices.ContainsFunc(keys, func(k []byte) bool { return string(k) == string(key) })
		}
		if dup {
			return &duplicateKeyError{path: string(key)}
		}
		keys = append(keys, key)

		var child *jsonShape // what the value is decoded into
		switch {
		case sh == nil:
		case sh.kind == shapeStruct:
			var exact bool
			if child, exact = sh.fields[string(key)]; !exact && sh.matchesFolded(key) {
				s.renames = append(s.renames, span{start, s.pos})
				renamed = true
			}
		case sh.kind == shapeMap:
			child = sh.elem
		}
		s.skipSpace()
		if s.pos == len(s.data) || s.data[s.pos] != ':' {
			return errNotJSON
		}
		s.pos++
		if err := s.value(child); err != nil {
			if dup, ok := err.(*duplicateKeyError); ok {
				dup.path = dupPath(string(key), dup.path)
			}
			return err
		}
		s.skipSpace()
		if s.pos == len(s.data) {
			return errNotJSON
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			if renamed {
				if dup := sh.caseDuplicate(keys); dup != nil {
					return dup
				}
			}
			return nil
		default:
			return errNotJSON
		}
	}
}

// dupPath is the path of a duplicated key inside the value at head: "customer" and "name"
// make "customer.name", "splits" and "[1].value" make "splits[1].value".
func dupPath(head, rest string) string {
	if strings.HasPrefix(rest, "[") {
		return head + rest
	}
	return head + "." + rest
}

// shapeKind is what encoding/json decodes a JSON object or array into.
type shapeKind uint8

const (
	shapeOther  shapeKind = iota // nothing whose keys it matches: a scalar, an interface, a json.Unmarshaler
	shapeStruct                  // a struct: keys match fields
	shapeMap                     // a map: keys are taken as they are
	shapeList                    // a slice or an array
)

// jsonShape is how encoding/json decodes into a Go type, as far as keys go: the fields of
// a struct by their exact JSON names, and what the values of a map or the items of a list
// are decoded into. A nil *jsonShape is shapeOther.
type jsonShape struct {
	kind   shapeKind
	fields map[string]*jsonShape // struct: its fields by JSON name
	folded map[string]string     // struct: its JSON names as encoding/json folds them → the name
	elem   *jsonShape            // map, list
}

// elemOf is what the items of a JSON array or the values of a JSON object decoded into sh
// are decoded into; for a JSON value of another kind than sh, nothing is decoded.
func (sh *jsonShape) elemOf(kind shapeKind) *jsonShape {
	if sh == nil || sh.kind != kind {
		return nil
	}
	return sh.elem
}

// matchesFolded reports whether encoding/json would match key, which is not the exact name
// of a field of struct sh, to a field by ignoring case. An ASCII key is folded as
// encoding/json folds it (to upper case); any other key, or one longer than any name, is
// taken to match: renaming an unknown key changes nothing, and so the answer does not
// depend on Unicode's case rules.
func (sh *jsonShape) matchesFolded(key []byte) bool {
	if sh == nil || sh.kind != shapeStruct {
		return false
	}
	var buf [64]byte
	if len(key) > len(buf) {
		return true
	}
	for i, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	_, ok := sh.folded[string(buf[:len(key)])]
	return ok
}

// caseDuplicate is a *duplicateKeyError for keys of an object decoded into struct sh that
// name one field in different cases ("value" and "Value"; "Value" and "VALUE"), or nil.
// Only the exact one is read, as the API reads it, but a reader that ignores case would
// read the other, so the body means two things and is refused. Two exact names of fields
// ("id" and "ID" where both are fields) are two fields, not a duplicate.
func (sh *jsonShape) caseDuplicate(keys [][]byte) *duplicateKeyError {
	first := map[string]string{} // fold → the first key that folds to it
	for _, k := range keys {
		f := foldJSONName(string(k))
		name, ok := sh.folded[f]
		if !ok {
			continue
		}
		prev, ok := first[f]
		if !ok {
			first[f] = string(k)
			continue
		}
		_, prevExact := sh.fields[prev]
		_, exact := sh.fields[string(k)]
		if !prevExact || !exact {
			if prevExact {
				name = prev
			} else if exact {
				name = string(k)
			}
			return &duplicateKeyError{path: name, spellings: [2]string{prev, string(k)}}
		}
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonShapes          sync.Map // reflect.Type → *jsonShape
)

// shapeOf is the jsonShape of t, cached.
func shapeOf(t reflect.Type) *jsonShape {
	if t == nil {
		return nil
	}
	if sh, ok := jsonShapes.Load(t); ok {
		return sh.(*jsonShape)
	}
	building := map[reflect.Type]*jsonShape{}
	sh := buildShape(t, building)
	for bt, bsh := range building {
		jsonShapes.LoadOrStore(bt, bsh) // a concurrent build made an equal shape
	}
	return sh
}

// buildShape is the shape of t, following encoding/json's decoding (decode.go: indirect,
// object, array): a type whose pointer has UnmarshalJSON or UnmarshalText decodes itself, a
// pointer is followed, a map with keys encoding/json takes has values of its element type.
// building holds the shapes being built, for types that contain themselves.
func buildShape(t reflect.Type, building map[reflect.Type]*jsonShape) *jsonShape {
	if sh, ok := building[t]; ok {
		return sh
	}
	if sh, ok := jsonShapes.Load(t); ok {
		return sh.(*jsonShape)
	}
	sh := &jsonShape{}
	building[t] = sh
	if implementsDecoder(t) {
		return sh
	}
	switch t.Kind() {
	case reflect.Pointer: // decoded into what it points to
		elem := buildShape(t.Elem(), building)
		building[t] = elem
		return elem
	case reflect.Struct:
		sh.kind = shapeStruct
		sh.fields = map[string]*jsonShape{}
		sh.folded = map[string]string{}
		for name, ft := range jsonStructFields(t) {
			sh.fields[name] = buildShape(ft, building)
			if f := foldJSONName(name); sh.folded[f] == "" || name < sh.folded[f] {
				sh.folded[f] = name // of names that fold alike, one, the same every time
			}
		}
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
				return sh
			}
		}
		sh.kind, sh.elem = shapeMap, buildShape(t.Elem(), building)
	case reflect.Slice, reflect.Array:
		sh.kind, sh.elem = shapeList, buildShape(t.Elem(), building)
	}
	return sh
}

// implementsDecoder reports whether encoding/json hands a value of type t to its own
// UnmarshalJSON or UnmarshalText rather than decoding its fields. Values decoded from a
// body are addressable, so methods on the pointer count.
func implementsDecoder(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer {
		if t.Name() == "" {
			return false
		}
		t = reflect.PointerTo(t)
	}
	return t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType)
}

// jsonStructFields are the fields encoding/json decodes a JSON object into in struct t, by
// JSON name, each with its Go type: the same fields encoding/json's typeFields (encode.go)
// finds, by the same rules: tags name fields, "-" leaves one out, embedded structs lend
// their fields, and of fields with one name the shallowest wins, a tagged one among
// equals, and none if still more than one.
func jsonStructFields(t reflect.Type) map[string]reflect.Type {
	type field struct {
		name   string
		tagged bool
		index  []int
		typ    reflect.Type
	}
	type embedded struct {
		index []int
		typ   reflect.Type
	}
	var fields []field
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					at := sf.Type
					if at.Kind() == reflect.Pointer {
						at = at.Elem()
					}
					if !sf.IsExported() && at.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if !validJSONTag(name) {
					name = ""
				}
				index := append(slices.Clone(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{name: cmp.Or(name, sf.Name), tagged: name != "", index: index, typ: sf.Type}
					fields = append(fields, f)
					if count[e.typ] > 1 {
						fields = append(fields, f) // found more than once at this depth: a tie
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, embedded{index: index, typ: ft})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := map[string]reflect.Type{}
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out[fields[i].name] = fields[i].typ
		}
		i = j
	}
	return out
}

// validJSONTag is encoding/json's isValidTag: a tag name it takes for a field's name.
func validJSONTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// foldJSONName is name as encoding/json folds a field's name to match keys in any case
// (fold.go): ASCII letters in upper case, any other letter the smallest of its case
// variants. An ASCII key matches a name exactly when their folds are equal.
func foldJSONName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case 'a' <= r && r <= 'z':
			r -= 'a' - 'A'
		case r >= utf8.RuneSelf:
			for {
				r2 := unicode.SimpleFold(r)
				if r2 <= r {
					r = r2
					break
				}
				r = r2
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
