// Package brcode is the one place in the project for Pix BR Codes ("Pix Copia e
// Cola", the EMV QRCPS merchant-presented payload behind a Pix QR code), Pix keys
// and Brazilian tax IDs. It imports only the standard library.
//
// # Tax IDs and Pix keys
//
// ParseTaxID, ValidCPF and ValidCNPJ validate CPF and CNPJ numbers, including the
// alphanumeric CNPJ (12 characters [0-9A-Z] and 2 numeric check digits, each
// character valued ASCII - 48, e.g. 12.ABC.345/01DE-35). NormalizeKey validates a
// Pix key of a given KeyType and returns the DICT canonical form (CPF/CNPJ bare,
// phone +55DDNNNNNNNNN, e-mail lower-case ≤ 77, EVP lower-case 8-4-4-4-12);
// DetectKey guesses the type when the caller has none; ParseKeyType reads key type
// names (RANDOM is the OpenPix name of EVP). Errors wrap ErrInvalidTaxID or
// ErrInvalidKey.
//
// # BR Codes
//
// EncodeStatic and EncodeDynamic generate codes: ASCII only (accents folded),
// fields in ascending ID order, amounts from integer centavos with 2 decimals,
// template 62 always present, upper-case CRC-16/CCITT-FALSE (CRC16). Parse reads
// a code with strict validation (framing, CRC, every Pix field rule) into a Code,
// which Encode writes back losslessly. Lengths are counted in characters, never
// bytes; a payload has at most 512 characters. Validation errors are *ParseError,
// naming the field ("54", "26.01", "63").
//
// The rules and test vectors come from the BCB manuals as collected in the
// project's reference notes (shared/reference/brcode.md).
package brcode
