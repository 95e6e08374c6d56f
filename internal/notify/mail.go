package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Mail sends the event as a plain-text e-mail over SMTP, upgraded with
// STARTTLS unless PlainText (a loopback server only: config checks it).
type Mail struct {
	Host string
	Port int
	From string
	To   []string
	// Username and Password authenticate (PLAIN, over TLS); none skips
	// authentication.
	Username string
	Password string
	// PlainText skips STARTTLS.
	PlainText bool
	// RootCAs are the authorities that sign the server's certificate; nil
	// trusts the system's.
	RootCAs *x509.CertPool
}

// Name implements Channel.
func (m *Mail) Name() string { return "email" }

// Send implements Channel. A 5xx answer of the server is permanent.
func (m *Mail) Send(ctx context.Context, e Event) error {
	msg, err := m.message(e)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(m.Host, strconv.Itoa(m.Port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connect to the mail server: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, m.Host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("greet the mail server: %w", smtpErr(err))
	}
	defer c.Close()
	if err := m.session(c, msg); err != nil {
		return err
	}
	if err := c.Quit(); err != nil {
		return fmt.Errorf("end the session: %w", smtpErr(err))
	}
	return nil
}

// session upgrades, authenticates and sends one message on c.
func (m *Mail) session(c *smtp.Client, msg []byte) error {
	if err := c.Hello("hrsync"); err != nil {
		return fmt.Errorf("hello: %w", smtpErr(err))
	}
	if !m.PlainText {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fmt.Errorf("the mail server does not offer STARTTLS, which notify.smtp.starttls requires: %w", ErrPermanent)
		}
		if err := c.StartTLS(&tls.Config{ServerName: m.Host, RootCAs: m.RootCAs, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("starttls: %w", smtpErr(err))
		}
	}
	if m.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", m.Username, m.Password, m.Host)); err != nil {
			return fmt.Errorf("authenticate: %w", smtpErr(err))
		}
	}
	if err := c.Mail(m.From); err != nil {
		return fmt.Errorf("sender: %w", smtpErr(err))
	}
	for i, to := range m.To {
		if err := c.Rcpt(to); err != nil {
			// The server's words may quote the address: only its code is kept.
			return fmt.Errorf("recipient %d of %d refused: %w", i+1, len(m.To), smtpCode(err))
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", smtpErr(err))
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("write the message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("send the message: %w", smtpErr(err))
	}
	return nil
}

// message is the RFC 5322 message: the title as subject, the text as a
// quoted-printable UTF-8 body.
func (m *Mail) message(e Event) ([]byte, error) {
	var body bytes.Buffer
	qp := quotedprintable.NewWriter(&body)
	if _, err := qp.Write([]byte(strings.ReplaceAll(Text(e), "\n", "\r\n"))); err != nil {
		return nil, fmt.Errorf("encode the message: %w", err)
	}
	if err := qp.Close(); err != nil {
		return nil, fmt.Errorf("encode the message: %w", err)
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	var b bytes.Buffer
	for _, h := range [][2]string{
		{"From", m.From},
		{"To", strings.Join(m.To, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", Title(e))},
		{"Date", at.Format(time.RFC1123Z)},
		{"Message-ID", "<" + uuid.NewString() + "@hrsync>"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
		{"Auto-Submitted", "auto-generated"},
	} {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body.Bytes())
	return b.Bytes(), nil
}

// smtpErr marks a 5xx answer of the server permanent.
func smtpErr(err error) error {
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 {
		return errors.Join(err, ErrPermanent)
	}
	return err
}

// smtpCode is err reduced to the server's code, for answers that may quote
// an address.
func smtpCode(err error) error {
	var te *textproto.Error
	if !errors.As(err, &te) {
		return err
	}
	coded := fmt.Errorf("the server answered %d", te.Code)
	if te.Code >= 500 {
		return errors.Join(coded, ErrPermanent)
	}
	return coded
}
