package tokens

import (
	"strconv"
	"strings"
)

// Format groups digits: 20000 as "20,000", -1234 as "-1,234".
func Format[N ~int | ~int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}
