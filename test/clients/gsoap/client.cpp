// Calls all five operations through gSOAP proxies generated from the live WSDLs (wsdl2h -N, then
// soapcpp2 -j -C), over the SOAP 1.1 and SOAP 1.2 bindings.
//
// Usage: client LABEL PHONE
// Prints one JSON line: {"soap11": {...}, "soap12": {...}}. The TS test (test/clients/gsoap.test.ts)
// holds the expected values. Endpoints are the ones the WSDLs gave wsdl2h.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "soapAuthCodeSendingSoap12Proxy.h"
#include "soapAuthCodeSendingSoapProxy.h"
#include "soapGetStudnetsMarksSoap12Proxy.h"
#include "soapGetStudnetsMarksSoapProxy.h"
#include "soapNotificationNotesSoap12Proxy.h"
#include "soapNotificationNotesSoapProxy.h"
#include "soapPushNotificationMobileSoap12Proxy.h"
#include "soapPushNotificationMobileSoapProxy.h"
// Every proxy installs its own table; the library still needs the global one to link.
#include "AuthCodeSendingSoap.nsmap"

namespace {

// JSON text for a UTF-8 string (bytes >= 0x80 pass through), or null for a missing one.
std::string json(const std::string *s) {
  if (s == nullptr) return "null";
  std::ostringstream out;
  out << '"';
  for (unsigned char c : *s) {
    if (c == '"' || c == '\\') out << '\\' << c;
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out << buf;
    } else out << c;
  }
  out << '"';
  return out.str();
}

std::string students(const tempuri__ArrayOfStudentInfo *list) {
  if (list == nullptr) return "null";
  std::string out = "[";
  for (const tempuri__StudentInfo *s : list->StudentInfo) {
    if (out.size() > 1) out += ",";
    if (s == nullptr) {
      out += "null";
      continue;
    }
    out += "{\"id_student\":" + json(s->id_USCOREstudent) + ",\"fullName\":" + json(s->fullName) +
           ",\"id_device\":" + json(s->id_USCOREdevice) + ",\"ShowActive\":" + json(s->ShowActive) + "}";
  }
  return out + "]";
}

// Stops with the fault on stderr: the TS test shows it.
void check(struct soap *soap, int rc, const char *what) {
  if (rc == SOAP_OK) return;
  std::cerr << what << " failed:" << std::endl;
  soap_stream_fault(soap, std::cerr);
  std::exit(1);
}

// The generated namespace table with SOAP 1.1's envelope and encoding namespaces. A WSDL with a
// soap12 binding makes wsdl2h import soap12.h, so every proxy's table (also the SOAP 1.1 ones')
// says SOAP 1.2, and soap_set_version() is undone by the soap_begin() of each call: the table is
// what decides the version.
const struct Namespace *soap11Namespaces(const struct Namespace *generated) {
  static std::vector<struct Namespace> table;
  if (table.empty()) {
    for (const struct Namespace *ns = generated; ns->id != nullptr; ns++) table.push_back(*ns);
    table.push_back({nullptr, nullptr, nullptr, nullptr});
    table[0].ns = "http://schemas.xmlsoap.org/soap/envelope/";
    table[0].in = "http://www.w3.org/*/soap-envelope";
    table[1].ns = "http://schemas.xmlsoap.org/soap/encoding/";
    table[1].in = "http://www.w3.org/*/soap-encoding";
  }
  return table.data();
}

// SOAP_C_UTFSTRING keeps std::string as UTF-8 both ways.
template <class Proxy> void setup(Proxy &proxy, short version) {
  soap_set_mode(proxy.soap, SOAP_C_UTFSTRING);
  if (version == 1) soap_set_namespaces(proxy.soap, soap11Namespaces(proxy.soap->namespaces));
}

template <class Auth, class Marks, class Notes, class Push>
std::string port(short version, const std::string &code, const std::string &phone) {
  Auth auth;
  Marks marks;
  Notes notes;
  Push push;
  setup(auth, version);
  setup(marks, version);
  setup(notes, version);
  setup(push, version);

  std::string school = "http://school-a.example";
  std::ostringstream out;

  const char show[] = {'1', '0'};
  const char *keys[] = {"active", "inactive"};
  out << "{";
  for (int i = 0; i < 2; i++) {
    _tempuri__GetStudentSchool req;
    req.school_USCOREbase_USCOREurl = &school;
    // s1:char is an unsignedShort: assigning the character gives its code, as the WSDL asks.
    req.show_USCOREactive = show[i];
    _tempuri__GetStudentSchoolResponse res;
    check(notes.soap, notes.GetStudentSchool(&req, res), "GetStudentSchool");
    out << "\"" << keys[i] << "\":" << students(res.GetStudentSchoolResult) << ",";
  }

  const std::string ids[] = {"1", "no-such-device", "esc", "k&<\xc3\xa9>\"'"};
  const char *tokenKeys[] = {"known", "unknown", "special", "specialId"};
  for (int i = 0; i < 4; i++) {
    _tempuri__GetTokenDevice req;
    std::string id = ids[i];
    req.id = &id;
    _tempuri__GetTokenDeviceResponse res;
    check(push.soap, push.GetTokenDevice(&req, res), "GetTokenDevice");
    out << "\"" << tokenKeys[i] << "\":" << json(res.GetTokenDeviceResult) << ",";
  }

  {
    _tempuri__AuthCode req;
    std::string c = code, p = phone;
    req.code = &c;
    req.phone = &p;
    _tempuri__AuthCodeResponse res;
    check(auth.soap, auth.AuthCode(&req, res), "AuthCode");
  }
  {
    _tempuri__GetStudentsMarks req;
    std::string student = "1", subject = "math";
    req.StudnetID = &student;
    req.SubjectID = &subject;
    _tempuri__GetStudentsMarksResponse res;
    check(marks.soap, marks.GetStudentsMarks(&req, res), "GetStudentsMarks");
  }
  {
    _tempuri__GetServerKeyAndSender req;
    _tempuri__GetServerKeyAndSenderResponse res;
    check(push.soap, push.GetServerKeyAndSender(&req, res), "GetServerKeyAndSender");
  }
  // Void operations have no value to show: reaching here means each answered without a fault.
  out << "\"authCode\":null,\"marks\":null,\"serverKey\":null}";
  return out.str();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: client LABEL PHONE" << std::endl;
    return 2;
  }
  std::string label = argv[1], phone = argv[2];
  std::string soap11 = port<AuthCodeSendingSoapProxy, GetStudnetsMarksSoapProxy, NotificationNotesSoapProxy,
                            PushNotificationMobileSoapProxy>(1, label + "-soap11", phone);
  std::string soap12 = port<AuthCodeSendingSoap12Proxy, GetStudnetsMarksSoap12Proxy, NotificationNotesSoap12Proxy,
                            PushNotificationMobileSoap12Proxy>(2, label + "-soap12", phone);
  std::cout << "{\"soap11\":" << soap11 << ",\"soap12\":" << soap12 << "}" << std::endl;
  return 0;
}
