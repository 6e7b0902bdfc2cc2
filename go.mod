module github.com/pixfoundry/payments

go 1.26

require (
	github.com/goccy/go-json v0.10.5
	github.com/google/btree v1.1.3
	github.com/google/uuid v1.6.0
	github.com/makiuchi-d/gozxing v0.1.1
	github.com/matryer/is v1.4.1
	github.com/skip2/go-qrcode v0.0.0-20200617195104-da1b6568686e
	go.etcd.io/bbolt v1.5.0
)

require (
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.3.7 // indirect
	golang.org/x/xerrors v0.0.0-20200804184101-5ec99f83aff1 // indirect
)
